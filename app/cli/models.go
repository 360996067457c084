package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"hark/app"
	"hark/app/fit"
	"hark/engine"
	"hark/library"
	"hark/library/store"
	"hark/models/nn"
	"hark/models/profile"
)

// modelsCommand is hark models, listed by Commands.
func modelsCommand() Command {
	return Command{
		Name:    "models",
		Usage:   "hark models [--json] | show ID [--json] | verify [ID] | rm ID [--repo] [--yes] | pull REPO[@REV]|ID | search TEXT [--json]",
		Summary: "list, inspect, verify, delete, search the hub for and download models (ID: fingerprint, org/repo or path)",
		Run:     runModels,
	}
}

// openLibrary opens the database in the data dir and indexes the roots
// afresh, so the CLI is right even when no app has run since a change.
func openLibrary(ctx context.Context) (*library.Library, *store.DB, error) {
	dir := app.DataDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, fmt.Errorf("create data folder %s: %w", dir, err)
	}
	db, err := store.Open(filepath.Join(dir, "hark.db"))
	if err != nil {
		return nil, nil, err
	}
	s, err := db.Settings(ctx)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	lib := library.New(library.Options{DB: db, Roots: app.LibraryRoots(s)})
	if _, err := lib.Scan(ctx); err != nil {
		db.Close()
		return nil, nil, err
	}
	return lib, db, nil
}

func runModels(ctx context.Context, env *Env, args []string) error {
	sub := ""
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		sub, args = args[0], args[1:]
	}
	switch sub {
	case "", "list", "ls":
		return modelsList(ctx, env, args)
	case "show":
		return modelsShow(ctx, env, args)
	case "verify":
		return modelsVerify(ctx, env, args)
	case "rm", "delete":
		return modelsRm(ctx, env, args)
	case "pull":
		return modelsPull(ctx, env, args)
	case "search":
		return modelsSearch(ctx, env, args)
	case "help":
		fmt.Fprintln(env.Stdout, "usage: hark models [--json] | show ID [--json] | verify [ID] | rm ID [--repo] [--yes] | pull REPO[@REV]|ID | search TEXT [--json]")
		return nil
	}
	return Usagef("unknown subcommand %q (want show, verify, rm, pull or search)", sub)
}

func modelsList(ctx context.Context, env *Env, args []string) error {
	fs := NewFlagSet(env, "models")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	kvBits := fs.Int("kv-bits", 0, fmt.Sprintf("judge the memory fit for a KV cache of %v bits (0: the engine's default, %s; %d: float32; unset: the Settings choice)", nn.KVBitsValues, defaultKVName(), nn.KVFloat32Bits))
	kvGroup := fs.Int("kv-group", 0, "the quantized KV cache's group size (32, 64 or 128; 0: 64)")
	ctxTokens := fs.Int("context", 0, "judge the memory fit for this many tokens of context (default: the Settings choice, else 8,192)")
	if err := Parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return Usagef("unexpected argument %q", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	opt := engine.EstimateOptions{KV: nn.KVQuant{Bits: *kvBits, Group: *kvGroup}, Context: *ctxTokens}
	if err := opt.KV.Validate(); err != nil {
		return Usagef("%v", err)
	}
	if *ctxTokens < 0 {
		return Usagef("--context must be positive")
	}
	lib, db, err := openLibrary(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	// Unless told otherwise, judge as the Library page does: for the KV
	// cache and context chosen in Settings, so the CLI and the UI agree.
	st, err := db.Settings(ctx)
	if err != nil {
		return err
	}
	if !set["kv-bits"] {
		opt.KV.Bits = st.KVBits
	}
	if !set["context"] {
		opt.Context = st.ContextTokens
	}
	ms, err := lib.List(ctx)
	if err != nil {
		return err
	}
	ms = fit.New().Apply(ms, opt)
	if *asJSON {
		return writeJSON(env.Stdout, ms)
	}
	for _, r := range lib.Status().Roots {
		if r.Error != "" && (r.Origin == "settings" || len(ms) == 0) {
			fmt.Fprintf(env.Stderr, "note: %s\n", r.Error)
		}
	}
	if len(ms) == 0 {
		fmt.Fprintf(env.Stderr, "no models found in %s\n", rootList(lib))
		return nil
	}
	tw := tabwriter.NewWriter(env.Stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKIND\tPARAMS\tQUANT\tSIZE\tMEMORY\tSTATUS")
	for _, m := range ms {
		q := m.QuantLabel()
		if q == "" {
			q = "-"
		}
		mem := "-"
		if m.Fit != "" {
			mem = humanBytes(m.MemoryNeeded) + " " + strings.ReplaceAll(m.Fit, "_", " ")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", m.ID, m.Kind, humanCount(m.Params), q, humanBytes(m.Size), mem, status(m))
	}
	return tw.Flush()
}

func rootList(lib *library.Library) string {
	var ps []string
	for _, r := range lib.Roots() {
		ps = append(ps, r.Path)
	}
	return strings.Join(ps, ", ")
}

// status is the one-word-or-so verdict for the table.
func status(m library.Model) string {
	switch {
	case m.Downloading && m.Incomplete:
		return "downloading"
	case m.Incomplete && len(m.Problems) > 0:
		return "incomplete: " + m.Problems[0]
	case len(m.Problems) > 0 && !m.Supported:
		return "broken: " + m.Problems[0]
	case !m.Supported:
		return "unsupported: " + m.Reason
	}
	return "ok"
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func modelsShow(ctx context.Context, env *Env, args []string) error {
	fs := NewFlagSet(env, "models show")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := Parse(fs, reorder(args)); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return Usagef("show needs exactly one ID")
	}
	lib, db, err := openLibrary(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	m, err := lib.Get(ctx, fs.Arg(0))
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(env.Stdout, m)
	}
	w := env.Stdout
	row := func(k, v string) {
		if v != "" {
			fmt.Fprintf(w, "%-15s %s\n", k+":", v)
		}
	}
	row("id", m.ID)
	row("path", m.Path)
	row("repo", m.Repo)
	row("commit", m.Commit)
	row("refs", strings.Join(m.Refs, ", "))
	row("kind", string(m.Kind))
	row("family", m.Family)
	row("model type", m.ModelType)
	row("architectures", strings.Join(m.Architectures, ", "))
	row("parameters", fmt.Sprintf("%s (%d)", humanCount(m.Params), m.Params))
	if m.ActiveParams > 0 {
		row("active", fmt.Sprintf("%s (%d) per token", humanCount(m.ActiveParams), m.ActiveParams))
	}
	row("dtype", m.DType)
	row("quantization", m.QuantLabel())
	if m.ContextLength > 0 {
		row("context", fmt.Sprint(m.ContextLength))
	}
	row("size", humanBytes(m.Size))
	row("modified", m.Modified.Format(time.RFC3339))
	row("config hash", m.ConfigHash)
	row("content id", m.ContentID)
	if m.Supported {
		row("status", "supported")
	} else {
		row("status", "unsupported: "+m.Reason)
	}
	for _, p := range m.Problems {
		row("problem", p)
	}
	fmt.Fprintf(w, "files:\n")
	for _, f := range m.Files {
		extra := ""
		if f.Problem != "" {
			extra = "  ! " + f.Problem
		}
		fmt.Fprintf(w, "  %10s  %s%s\n", humanBytes(f.Size), f.Name, extra)
	}
	return nil
}

// reorder moves flags before positional arguments so "show ID --json"
// works like "show --json ID".
func reorder(args []string) []string {
	var flags, pos []string
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			flags = append(flags, a)
		} else {
			pos = append(pos, a)
		}
	}
	return append(flags, pos...)
}

func modelsVerify(ctx context.Context, env *Env, args []string) error {
	fs := NewFlagSet(env, "models verify")
	if err := Parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return Usagef("verify takes at most one ID")
	}
	lib, db, err := openLibrary(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	var targets []library.Model
	if fs.NArg() == 1 {
		m, err := lib.Resolve(ctx, fs.Arg(0))
		if err != nil {
			return err
		}
		targets = append(targets, m)
	} else if targets, err = lib.List(ctx); err != nil {
		return err
	}
	bad := 0
	for _, m := range targets {
		bar := newProgressBar(env.Stderr, "verify "+m.ID)
		r, err := lib.Verify(ctx, m.Path, bar.update)
		bar.done()
		if err != nil {
			return err
		}
		if r.OK {
			fmt.Fprintf(env.Stdout, "ok       %s (%s)\n", m.ID, verifySummary(r))
			continue
		}
		bad++
		fmt.Fprintf(env.Stdout, "FAILED   %s\n", m.ID)
		for _, mm := range r.Mismatches {
			fmt.Fprintf(env.Stdout, "  %s: %s is %s, expected %s\n", mm.File, mm.Algo, mm.Actual, mm.Expected)
		}
		for _, p := range r.Problems {
			fmt.Fprintf(env.Stdout, "  %s\n", p)
		}
	}
	if bad > 0 {
		return fmt.Errorf("%d of %d models failed verification", bad, len(targets))
	}
	return nil
}

// verifySummary says what a passing verify checked: hashes where there
// are any, and the load checks (config.json, safetensors headers, layers).
func verifySummary(r library.VerifyResult) string {
	parts := []string{}
	if r.Checked > 0 {
		parts = append(parts, fmt.Sprintf("%d files, %s hashed", r.Checked, humanBytes(r.Bytes)))
	} else {
		parts = append(parts, "no hashes to check plain files against")
	}
	if len(r.Checks) > 0 {
		parts = append(parts, "valid: "+strings.Join(r.Checks, ", "))
	}
	return strings.Join(parts, "; ")
}

func modelsRm(ctx context.Context, env *Env, args []string) error {
	fs := NewFlagSet(env, "models rm")
	repo := fs.Bool("repo", false, "delete the whole repo (every snapshot), not only this snapshot")
	yes := fs.Bool("yes", false, "do not ask for confirmation")
	if err := Parse(fs, reorder(args)); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return Usagef("rm needs exactly one ID")
	}
	lib, db, err := openLibrary(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	dry, err := lib.Delete(ctx, fs.Arg(0), *repo, true)
	if err != nil {
		return err
	}
	if !*yes {
		fmt.Fprintf(env.Stderr, "delete %s (frees %s)? [y/N] ", strings.Join(dry.Paths, ", "), humanBytes(dry.Freed))
		line, _ := bufio.NewReader(env.Stdin).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
			return fmt.Errorf("not deleted")
		}
	}
	res, err := lib.Delete(ctx, fs.Arg(0), *repo, false)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "deleted %s; freed %s (%d blobs removed, %d kept for other snapshots)\n", strings.Join(res.Paths, ", "), humanBytes(res.Freed), res.Blobs, res.Kept)
	return nil
}

func modelsPull(ctx context.Context, env *Env, args []string) error {
	fs := NewFlagSet(env, "models pull")
	if err := Parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return Usagef("pull needs exactly one REPO[@REV] or the ID of an incomplete model")
	}
	lib, db, err := openLibrary(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	repo, rev, cache, err := pullTarget(ctx, lib, fs.Arg(0))
	if err != nil {
		return err
	}
	if n, have := library.PartialBlobs(filepath.Join(cache, library.RepoFolder(repo))); n > 0 {
		fmt.Fprintf(env.Stderr, "resuming %d partial download(s), %s already here\n", n, humanBytes(have))
	}
	bar := newProgressBar(env.Stderr, "pull "+fs.Arg(0))
	res, err := library.NewPuller(library.PullOptions{Cache: cache, Getenv: os.Getenv}).Pull(ctx, repo, rev, bar.update)
	bar.done()
	if err != nil {
		return err
	}
	if err := lib.RescanUnit(ctx, cache, filepath.Join(cache, library.RepoFolder(repo))); err != nil {
		return err
	}
	m, err := lib.Get(ctx, res.Fingerprint)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "pulled %s: %d files, %s (%s downloaded) — %s\n", res.Fingerprint, res.Files, humanBytes(res.Size), humanBytes(res.Downloaded), status(m))
	return nil
}

// modelsSearch asks the hub (HF_ENDPOINT, HF_TOKEN) for models, most
// downloaded first.
func modelsSearch(ctx context.Context, env *Env, args []string) error {
	fs := NewFlagSet(env, "models search")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	kind := fs.String("kind", "", "only `chat` or `speech` models")
	mlxOnly := fs.Bool("mlx", false, "only MLX-format repos")
	limit := fs.Int("limit", 20, "at most this many results (up to 100)")
	if err := Parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return Usagef("search takes one TEXT (quote words with spaces)")
	}
	if *kind != "" && *kind != string(profile.KindChat) && *kind != string(profile.KindSpeech) {
		return Usagef("--kind must be chat or speech, not %q", *kind)
	}
	q := library.SearchQuery{Text: fs.Arg(0), Kind: profile.Kind(*kind), MLX: *mlxOnly, Limit: *limit}
	res, err := library.NewPuller(library.PullOptions{Getenv: os.Getenv}).Search(ctx, q)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		if res == nil {
			res = []library.HubModel{}
		}
		return enc.Encode(res)
	}
	if len(res) == 0 {
		fmt.Fprintln(env.Stdout, "no models found")
		return nil
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "REPO\tKIND\tPARAMS\tDOWNLOADS\tHARK")
	for _, m := range res {
		params, support := "", "unsupported"
		if m.Params > 0 {
			params = humanCount(m.Params)
		}
		if m.Supported {
			support = "supported"
		}
		if m.MLX {
			support += ", MLX"
		}
		kind := string(m.Kind)
		if kind == "" {
			kind = m.PipelineTag
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", m.Repo, kind, params, m.Downloads, support)
	}
	return tw.Flush()
}

// pullTarget reads pull's argument: org/repo[@rev] into the first root,
// or a model ID (hf:org/repo@commit) to finish that snapshot in the cache
// it lives in.
func pullTarget(ctx context.Context, lib *library.Library, arg string) (repo, rev, cache string, err error) {
	if strings.HasPrefix(arg, "hf:") {
		m, err := lib.Resolve(ctx, arg)
		if err != nil {
			return "", "", "", err
		}
		if _, err := library.ResumeRef(m); err != nil {
			return "", "", "", err
		}
		return m.Repo, m.Commit, m.Root, nil
	}
	repo, rev, err = library.ParsePullRef(arg)
	if err != nil {
		return "", "", "", Usagef("%v", err)
	}
	return repo, rev, lib.Roots()[0].Path, nil
}

// humanBytes uses decimal units (GB = 10^9 bytes), as the UI does, so a
// size reads the same in both.
func humanBytes(n int64) string {
	const unit = 1000
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 5; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %cB", float64(n)/float64(div), "KMGTPE"[exp])
}

// humanCount writes parameter counts as 260K, 1.2B.
func humanCount(n int64) string {
	switch {
	case n <= 0:
		return "-"
	case n < 1_000:
		return fmt.Sprint(n)
	case n < 1_000_000:
		return trimZero(float64(n)/1e3) + "K"
	case n < 1_000_000_000:
		return trimZero(float64(n)/1e6) + "M"
	default:
		return trimZero(float64(n)/1e9) + "B"
	}
}

func trimZero(f float64) string {
	s := fmt.Sprintf("%.1f", f)
	return strings.TrimSuffix(s, ".0")
}
