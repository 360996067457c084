package mlxc

// For the loader tests: open one candidate without caching it, and the
// symbols the generated table binds.
var OpenLibrary = func(path string) error {
	_, err := openLibrary(path)
	return err
}

func RequiredSymbols() (req, opt []string) {
	var t table
	for _, s := range t.symbols() {
		if s.optional {
			opt = append(opt, s.name)
		} else {
			req = append(req, s.name)
		}
	}
	return req, opt
}

const HeadersMLX = headersMLX
