package transcribe

import (
	"fmt"
	"math"

	"hark/mlx"
	"hark/models/whisper"
)

// detectLanguage returns the probability of each language code given the
// encoder output of one window: the decoder reads <|startoftranscript|>
// alone and only the language tokens compete (OpenAI's detect_language).
// best is the most likely code (first in token order on a tie).
func (m *Model) detectLanguage(audio *whisper.Cross) (best string, probs map[string]float64, err error) {
	tok := m.Tokenizer
	if !tok.Multilingual {
		return "en", map[string]float64{"en": 1}, nil
	}
	ids, codes := tok.LanguageTokens()
	dec, err := m.Whisper.NewDecoderOver(audio, 1)
	if err != nil {
		return "", nil, err
	}
	defer dec.Close()
	h, err := dec.Forward([][]int{{tok.SOT}})
	if err != nil {
		return "", nil, fmt.Errorf("language detection: %w", err)
	}
	l := m.Whisper.Logits(h)
	row := l.Float32s()
	mlx.Free(h, l)
	lang := make([]float32, len(ids))
	for i, id := range ids {
		lang[i] = row[id]
	}
	lse := logSumExp(lang)
	probs = make(map[string]float64, len(ids))
	bi := argmax(lang)
	for i, c := range codes {
		probs[c] = math.Exp(float64(lang[i]) - lse)
	}
	return codes[bi], probs, nil
}
