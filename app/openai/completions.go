package openai

import (
	"bytes"
	"encoding/json"
	"net/http"
	"time"

	"hark/engine"
)

// completionRequest is POST /v1/completions: the prompt is continued as
// raw text, without a chat template.
type completionRequest struct {
	samplingFields
	Prompt   json.RawMessage `json:"prompt"`
	Logprobs *int            `json:"logprobs"`
	Echo     bool            `json:"echo"`
	Suffix   string          `json:"suffix"`
	BestOf   *int            `json:"best_of"`
}

func (req *completionRequest) prompt() (string, error) {
	p := bytes.TrimSpace(req.Prompt)
	if len(p) == 0 || bytes.Equal(p, []byte("null")) {
		return "", nil
	}
	var s string
	if json.Unmarshal(p, &s) == nil {
		return s, nil
	}
	var list []string
	if json.Unmarshal(p, &list) == nil && len(list) == 1 {
		return list[0], nil
	}
	return "", badParam("prompt", "prompt must be a string (or an array of one string): Hark writes one completion per request")
}

func (s *server) completions(w http.ResponseWriter, r *http.Request) error {
	var req completionRequest
	if err := decodeJSON(r, &req); err != nil {
		return err
	}
	text, err := req.prompt()
	if err != nil {
		return err
	}
	switch {
	case req.Echo:
		return badParam("echo", "echo is not supported")
	case req.Suffix != "":
		return badParam("suffix", "suffix (fill in the middle) is not supported")
	case req.BestOf != nil && *req.BestOf != 1:
		return badParam("best_of", "best_of must be 1")
	case req.Logprobs != nil && (*req.Logprobs < 0 || *req.Logprobs > 5):
		return badParam("logprobs", "logprobs must be between 0 and 5")
	}
	ctx := r.Context()
	lease, opt, err := s.lease(ctx, &req.samplingFields)
	if err != nil {
		return err
	}
	defer lease.Release()
	e := lease.Engine
	if req.MaxTokens == nil {
		opt.MaxTokens = 16 // OpenAI's default for completions
	}
	ids := e.RawPrompt(text)
	if err := checkFits(e, ids); err != nil {
		return err
	}
	j := &job{lease: lease, prompt: ids, opt: opt, logprobs: req.Logprobs != nil, modelName: req.Model, prev: ids[len(ids)-1]}
	if req.Logprobs != nil {
		j.opt.TopLogprobs = *req.Logprobs
	}
	if err := s.reserveRow(ctx, j); err != nil {
		return err
	}
	id, created := "cmpl-"+randomID(24), time.Now().Unix()
	body := func(text string, finish any, lps []engine.TokenLogprob) map[string]any {
		choice := map[string]any{"index": 0, "text": text, "finish_reason": finish, "logprobs": nil}
		if j.logprobs {
			choice["logprobs"] = legacyLogprobs(j, lps)
		}
		return map[string]any{"id": id, "object": "text_completion", "created": created, "model": req.Model,
			"system_fingerprint": systemFingerprint, "choices": []any{choice}}
	}
	if !req.Stream {
		res, lps, err := s.run(ctx, j, nil)
		if err != nil {
			return err
		}
		out := body(res.Text, finishReason(res.FinishReason), lps)
		out["usage"] = usageOf(res.Stats)
		writeJSON(w, 200, out)
		return nil
	}
	ev, err := newEvents(w)
	if err != nil {
		return err
	}
	res, _, err := s.run(ctx, j, func(t string, lps []engine.TokenLogprob) error {
		return ev.send(body(t, nil, lps))
	})
	if err != nil {
		if ctx.Err() == nil {
			ev.send(map[string]any{"error": map[string]any{"message": err.Error(), "type": typeServer}})
		}
		return errStreamed
	}
	ev.send(body("", finishReason(res.FinishReason), nil))
	if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
		u := body("", nil, nil)
		u["choices"], u["usage"] = []any{}, usageOf(res.Stats)
		ev.send(u)
	}
	ev.done()
	return errStreamed
}

// legacyLogprobs is the completions API's logprobs object.
func legacyLogprobs(j *job, lps []engine.TokenLogprob) map[string]any {
	tokens, values, tops, offsets := []string{}, []float64{}, []map[string]float64{}, []int{}
	off := 0
	for _, lp := range lps {
		top := map[string]float64{}
		for _, a := range lp.Top {
			top[j.tokenText(a.Token)] = a.Logprob
		}
		t := j.tokenText(lp.Token)
		j.prev = lp.Token
		tokens, values, offsets = append(tokens, t), append(values, lp.Logprob), append(offsets, off)
		off += len(t)
		tops = append(tops, top)
	}
	return map[string]any{"tokens": tokens, "token_logprobs": values, "top_logprobs": tops, "text_offset": offsets}
}
