package tokenizer

import (
	"encoding/json"
	"fmt"
)

// postProcessor adds special tokens around an encoded sequence.
type postProcessor interface {
	process(ids []int) []int
}

const supportedPostProcessors = "TemplateProcessing, ByteLevel, RobertaProcessing, BertProcessing, Sequence"

type wrapProcessor struct{ before, after []int }

func (w *wrapProcessor) process(ids []int) []int {
	if len(w.before) == 0 && len(w.after) == 0 {
		return ids
	}
	out := make([]int, 0, len(ids)+len(w.before)+len(w.after))
	out = append(out, w.before...)
	out = append(out, ids...)
	return append(out, w.after...)
}

type seqProcessor []postProcessor

func (s seqProcessor) process(ids []int) []int {
	for _, p := range s {
		ids = p.process(ids)
	}
	return ids
}

// parsePostProcessor returns nil for processors that never change ids
// (ByteLevel only adjusts offsets).
func parsePostProcessor(raw json.RawMessage) (postProcessor, error) {
	var t typed
	if err := json.Unmarshal(raw, &t); err != nil {
		return nil, fmt.Errorf("post_processor: %w", err)
	}
	switch t.Type {
	case "ByteLevel":
		return nil, nil
	case "TemplateProcessing":
		var c struct {
			Single []struct {
				SpecialToken *struct {
					ID string `json:"id"`
				} `json:"SpecialToken"`
				Sequence *struct {
					ID string `json:"id"`
				} `json:"Sequence"`
			} `json:"single"`
			SpecialTokens map[string]struct {
				IDs []int `json:"ids"`
			} `json:"special_tokens"`
		}
		if err := json.Unmarshal(raw, &c); err != nil {
			return nil, fmt.Errorf("post_processor TemplateProcessing: %w", err)
		}
		w := &wrapProcessor{}
		seen := false
		for _, it := range c.Single {
			switch {
			case it.Sequence != nil:
				if seen {
					return nil, fmt.Errorf("post_processor TemplateProcessing: more than one sequence in single template")
				}
				seen = true
			case it.SpecialToken != nil:
				st, ok := c.SpecialTokens[it.SpecialToken.ID]
				if !ok {
					return nil, fmt.Errorf("post_processor TemplateProcessing: special token %q not defined", it.SpecialToken.ID)
				}
				if seen {
					w.after = append(w.after, st.IDs...)
				} else {
					w.before = append(w.before, st.IDs...)
				}
			}
		}
		return w, nil
	case "RobertaProcessing", "BertProcessing":
		var c struct {
			Sep []any `json:"sep"`
			Cls []any `json:"cls"`
		}
		if err := json.Unmarshal(raw, &c); err != nil || len(c.Sep) != 2 || len(c.Cls) != 2 {
			return nil, fmt.Errorf("post_processor %s: bad cls/sep", t.Type)
		}
		cls, _ := c.Cls[1].(float64)
		sep, _ := c.Sep[1].(float64)
		return &wrapProcessor{before: []int{int(cls)}, after: []int{int(sep)}}, nil
	case "Sequence":
		var c struct {
			Processors []json.RawMessage `json:"processors"`
		}
		if err := json.Unmarshal(raw, &c); err != nil {
			return nil, fmt.Errorf("post_processor Sequence: %w", err)
		}
		var seq seqProcessor
		for _, r := range c.Processors {
			p, err := parsePostProcessor(r)
			if err != nil {
				return nil, err
			}
			if p != nil {
				seq = append(seq, p)
			}
		}
		if len(seq) == 0 {
			return nil, nil
		}
		return seq, nil
	}
	return nil, fmt.Errorf("unsupported post_processor type %q (supported: %s)", t.Type, supportedPostProcessors)
}
