package whisper

// Language is one of Whisper's languages: its code (as in the <|xx|> token)
// and English name.
type Language struct {
	Code string
	Name string
}

// Languages lists Whisper's languages in token order: the language token of
// Languages[i] is <|startoftranscript|> + 1 + i. Models with a 51865-token
// vocabulary know the first 99; large-v3 (51866) adds Cantonese.
var Languages = []Language{
	{"en", "english"}, {"zh", "chinese"}, {"de", "german"}, {"es", "spanish"},
	{"ru", "russian"}, {"ko", "korean"}, {"fr", "french"}, {"ja", "japanese"},
	{"pt", "portuguese"}, {"tr", "turkish"}, {"pl", "polish"}, {"ca", "catalan"},
	{"nl", "dutch"}, {"ar", "arabic"}, {"sv", "swedish"}, {"it", "italian"},
	{"id", "indonesian"}, {"hi", "hindi"}, {"fi", "finnish"}, {"vi", "vietnamese"},
	{"he", "hebrew"}, {"uk", "ukrainian"}, {"el", "greek"}, {"ms", "malay"},
	{"cs", "czech"}, {"ro", "romanian"}, {"da", "danish"}, {"hu", "hungarian"},
	{"ta", "tamil"}, {"no", "norwegian"}, {"th", "thai"}, {"ur", "urdu"},
	{"hr", "croatian"}, {"bg", "bulgarian"}, {"lt", "lithuanian"}, {"la", "latin"},
	{"mi", "maori"}, {"ml", "malayalam"}, {"cy", "welsh"}, {"sk", "slovak"},
	{"te", "telugu"}, {"fa", "persian"}, {"lv", "latvian"}, {"bn", "bengali"},
	{"sr", "serbian"}, {"az", "azerbaijani"}, {"sl", "slovenian"}, {"kn", "kannada"},
	{"et", "estonian"}, {"mk", "macedonian"}, {"br", "breton"}, {"eu", "basque"},
	{"is", "icelandic"}, {"hy", "armenian"}, {"ne", "nepali"}, {"mn", "mongolian"},
	{"bs", "bosnian"}, {"kk", "kazakh"}, {"sq", "albanian"}, {"sw", "swahili"},
	{"gl", "galician"}, {"mr", "marathi"}, {"pa", "punjabi"}, {"si", "sinhala"},
	{"km", "khmer"}, {"sn", "shona"}, {"yo", "yoruba"}, {"so", "somali"},
	{"af", "afrikaans"}, {"oc", "occitan"}, {"ka", "georgian"}, {"be", "belarusian"},
	{"tg", "tajik"}, {"sd", "sindhi"}, {"gu", "gujarati"}, {"am", "amharic"},
	{"yi", "yiddish"}, {"lo", "lao"}, {"uz", "uzbek"}, {"fo", "faroese"},
	{"ht", "haitian creole"}, {"ps", "pashto"}, {"tk", "turkmen"}, {"nn", "nynorsk"},
	{"mt", "maltese"}, {"sa", "sanskrit"}, {"lb", "luxembourgish"}, {"my", "myanmar"},
	{"bo", "tibetan"}, {"tl", "tagalog"}, {"mg", "malagasy"}, {"as", "assamese"},
	{"tt", "tatar"}, {"haw", "hawaiian"}, {"ln", "lingala"}, {"ha", "hausa"},
	{"ba", "bashkir"}, {"jw", "javanese"}, {"su", "sundanese"}, {"yue", "cantonese"},
}

// languageAliases are the extra names OpenAI's CLI accepts for a language.
var languageAliases = map[string]string{
	"burmese": "my", "valencian": "ca", "flemish": "nl", "haitian": "ht",
	"letzeburgesch": "lb", "pushto": "ps", "panjabi": "pa", "moldavian": "ro",
	"moldovan": "ro", "sinhalese": "si", "castilian": "es", "mandarin": "zh",
}

// LookupLanguage resolves a code ("en"), an English name ("English") or an
// alias ("castilian") to a language code.
func LookupLanguage(s string) (string, bool) {
	s = toLowerASCII(s)
	for _, l := range Languages {
		if l.Code == s || l.Name == s {
			return l.Code, true
		}
	}
	if c, ok := languageAliases[s]; ok {
		return c, true
	}
	return "", false
}

func toLowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
