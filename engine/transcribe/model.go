package transcribe

import (
	"fmt"
	"os"

	"hark/mlx"
	"hark/models/whisper"
)

// Model is a Whisper model ready to transcribe. It is an io.Closer. One
// Model runs one transcription at a time.
type Model struct {
	Whisper   *whisper.Model
	Tokenizer *whisper.Tokenizer
}

// TokenizerDirsEnv names a directory holding multilingual.tiktoken and
// gpt2.tiktoken, for checkpoints that ship no tokenizer.json
// (mlx-community's).
const TokenizerDirsEnv = "HARK_WHISPER_ASSETS"

// Open loads the model folder dir (config.json + safetensors, and
// tokenizer.json or tiktoken files). tokenizerDirs are extra places to look
// for the tiktoken files.
func Open(dir string, tokenizerDirs ...string) (*Model, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("model: %s is not a model folder", dir)
	}
	if d := os.Getenv(TokenizerDirsEnv); d != "" {
		tokenizerDirs = append(tokenizerDirs, d)
	}
	wm, err := whisper.Load(dir)
	if err != nil {
		return nil, err
	}
	tok, err := whisper.LoadTokenizer(dir, wm.Config.Dims, tokenizerDirs...)
	if err != nil {
		wm.Close()
		return nil, err
	}
	return New(wm, tok)
}

// New pairs a loaded graph with its tokenizer.
func New(wm *whisper.Model, tok *whisper.Tokenizer) (*Model, error) {
	d := wm.Config.Dims
	if tok.Multilingual != d.Multilingual() || tok.NumLanguages != d.NumLanguages() || tok.TimestampBegin+1500 > d.Vocab-1 {
		return nil, fmt.Errorf("model: tokenizer (%d languages, timestamps from %d) does not fit a vocabulary of %d", tok.NumLanguages, tok.TimestampBegin, d.Vocab)
	}
	return &Model{Whisper: wm, Tokenizer: tok}, nil
}

// Close frees the weights, and the backend's cached memory with them.
func (m *Model) Close() error {
	err := m.Whisper.Close()
	mlx.ReleaseDeviceMemory()
	return err
}
