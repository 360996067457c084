package grammar

import (
	"sync"

	"hark/engine"
	"hark/models/tokenizer"
)

// Building a Vocab reads every token of the model (a fraction of a second
// for 150k tokens), so one per tokenizer is kept: the last few models used.
var vocabs struct {
	sync.Mutex
	list []cachedVocab
}

type cachedVocab struct {
	tok  *tokenizer.Tokenizer
	size int
	v    *Vocab
}

const keepVocabs = 2

// VocabOf returns the vocabulary of e's model, built on first use.
func VocabOf(e *engine.Engine) *Vocab {
	size := e.Model.Info().VocabSize
	vocabs.Lock()
	defer vocabs.Unlock()
	for i, c := range vocabs.list {
		if c.tok == e.Tokenizer && c.size == size {
			// Most recent first.
			copy(vocabs.list[1:i+1], vocabs.list[:i])
			vocabs.list[0] = c
			return c.v
		}
	}
	v := NewVocab(e.Tokenizer, size)
	vocabs.list = append([]cachedVocab{{e.Tokenizer, size, v}}, vocabs.list...)
	if len(vocabs.list) > keepVocabs {
		vocabs.list = vocabs.list[:keepVocabs]
	}
	return v
}

// ForSchema compiles a JSON Schema for e's model and starts a generation:
// set the result as engine.Options.Constraint (the API's response_format
// json_schema).
func ForSchema(e *engine.Engine, schema []byte) (*State, error) {
	g, err := Compile(schema, VocabOf(e))
	if err != nil {
		return nil, err
	}
	return g.Start(), nil
}

// ForJSONObject starts a generation of any JSON object for e's model
// (response_format json_object).
func ForJSONObject(e *engine.Engine) *State { return JSONObject(VocabOf(e)).Start() }
