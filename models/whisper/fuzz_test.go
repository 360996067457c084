package whisper

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzConfigs loads arbitrary config.json and generation_config.json pairs
// as a downloaded Whisper model ships them: a clean error, or dimensions
// and alignment heads that are safe to build and index with.
func FuzzConfigs(f *testing.F) {
	hf := `{"model_type":"whisper","d_model":64,"encoder_layers":2,"decoder_layers":2,"encoder_attention_heads":2,"decoder_attention_heads":2,"num_mel_bins":80,"max_source_positions":1500,"max_target_positions":448,"vocab_size":51865}`
	openai := `{"n_mels":80,"n_audio_ctx":1500,"n_audio_state":64,"n_audio_head":2,"n_audio_layer":2,"n_vocab":51864,"n_text_ctx":448,"n_text_state":64,"n_text_head":2,"n_text_layer":2}`
	for _, c := range [][2]string{
		{hf, `{"alignment_heads":[[1,0],[1,1]],"lang_to_id":{"<|en|>":50259},"task_to_id":{"transcribe":50359},"no_timestamps_token_id":50363}`},
		{openai, ``},
		{hf, `{"alignment_heads":[[2,0]]}`},
		{`{"model_type":"whisper","d_model":-1}`, `{"alignment_heads":[[-1,99]]}`},
	} {
		f.Add([]byte(c[0]), []byte(c[1]))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, cfg, gen []byte) {
		os.WriteFile(filepath.Join(dir, "config.json"), cfg, 0o600)
		genPath := filepath.Join(dir, "generation_config.json")
		if len(gen) == 0 {
			os.Remove(genPath)
		} else {
			os.WriteFile(genPath, gen, 0o600)
		}
		c, err := LoadConfig(dir)
		if err != nil {
			return
		}
		if c.TextLayer <= 0 || c.TextHead <= 0 || c.AudioLayer <= 0 || c.NMels <= 0 {
			t.Fatalf("accepted dims %+v", c.Dims)
		}
		for _, h := range c.AlignmentHeads {
			if h[0] < 0 || h[0] >= c.TextLayer || h[1] < 0 || h[1] >= c.TextHead {
				t.Fatalf("accepted alignment head %v for %d layers × %d heads", h, c.TextLayer, c.TextHead)
			}
		}
	})
}
