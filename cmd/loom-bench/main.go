// Command loom-bench measures loom's SQLite engine against the budgets of the
// specification on a generated workload, beside two hand-written
// comparisons run in the same process: a plain SQLite baseline over
// loom's own schema and file, and a minimal store with a schema and file
// of its own (minimal.db beside -db). The minimal store is the least a
// store needs for the same operations with the same guarantees: a
// sessions table with its counts and last prompt, one row a message
// holding the whole message as JSON, and a contentless FTS5 index fed
// from Go; so each figure has a floor that is not loom's schema, and the
// report gives loom's ratio to it and the two stores' sizes on disk.
//
//	go run ./cmd/loom-bench -sessions 10000 -messages 100 -big 100000
//
// The store and the minimal store are generated once, from the same
// workload, and reused by later runs.
//
//	go run ./cmd/loom-bench -load
//	go run ./cmd/loom-bench -copy
//
// -load runs 55 writers in two processes on one store, on SQLite and on
// PostgreSQL, and checks that nothing was lost or duplicated; -copy
// copies a 100,000-message SQLite store to PostgreSQL and back with
// loom session export and import and checks that the exports are the
// same.
//
//	go run ./cmd/loom-bench -mcp-serve -mcp-duration 10m
//
//	go run ./cmd/loom-bench -capture
//
// -capture measures capture's latency: loom capture run as its own
// process, sessions of three agents written one at a time, each timed
// from its writing to its import recorded in the store, beside a file
// notification watcher told of the same writes.
//
//	go run ./cmd/loom-bench -usage
//
// -usage generates 1,000,000 messages into a SQLite store and a
// PostgreSQL schema (once) and times the daily usage report over them.
//
//	go run ./cmd/loom-bench -process -db /tmp/loom-bench-process/sessions.db
//
// -process times loom's short commands as whole processes (loom version,
// session list, search, the import hook on an unchanged file, and loom
// mcp to its first answered search), each beside a minimal Go program
// doing the same (cmd/loom-bench/floor), 20 pairs each; -loom names the
// loom binary to time (a release build, say), else ./cmd/loom is built.
//
// -locomo, -longmemeval and -realtalk measure how well search finds on
// three public benchmarks of long-term memory, from their data files (docs/search.md
// says where to download them): each conversation's sessions are written
// as Claude Code session files, imported, and each question searched as
// it is; hit@1/5/10, MRR and evidence recall per category.
//
//	go run ./cmd/loom-bench -locomo locomo10.json
//	go run ./cmd/loom-bench -longmemeval longmemeval_s_cleaned.json
//	go run ./cmd/loom-bench -realtalk REALTALK/data
//
// -scale plants both LoCoMo's and REALTALK's conversations in a store of
// a million filler messages over a thousand projects (built once under
// -scale-store) and asks each question in its project and across all.
//
//	go run ./cmd/loom-bench -scale -locomo locomo10.json -realtalk REALTALK/data [-scale-postgres]
//
//	go run ./cmd/loom-bench -hub -hub-records 1000000
//
// -hub runs a team of 200 members × 2 machines on a hub of two loom serve
// processes on PostgreSQL (-postgres), each request to the other
// process: the history loaded, then rounds of sync by every machine at
// once, one process killed with SIGKILL halfway through and started
// again; it reports push and pull latency, hub CPU per sync and memory,
// and counts what the hub and every machine hold.
//
// -mcp-serve runs loom serve as its own process and drives its /mcp with
// 50 clients, some of which open a session for every call and never
// close it, and reports the server's resident memory over the run.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/sqlite"
)

type config struct {
	db       string
	sessions int
	messages int
	big      int
	runs     int
	loomBin  string
	out      string
	ops      *regexp.Regexp
	// decode makes the minimal store decode the messages it reads.
	decode bool
}

func main() {
	if spec := os.Getenv(loadWorkerEnv); spec != "" {
		os.Exit(loadWorkerMain(spec))
	}
	var c config
	flag.StringVar(&c.db, "db", filepath.Join(os.TempDir(), "loom-bench", "sessions.db"), "store to generate (once) and measure")
	flag.IntVar(&c.sessions, "sessions", 10000, "number of ordinary sessions")
	flag.IntVar(&c.messages, "messages", 100, "messages per ordinary session")
	flag.IntVar(&c.big, "big", 100000, "messages in the one big session")
	flag.IntVar(&c.runs, "runs", 200, "repetitions of each fast operation")
	flag.StringVar(&c.loomBin, "loom", "", "loom binary for the whole-process list figure (built from ./cmd/loom when empty)")
	flag.StringVar(&c.out, "o", "", "also write the report (Markdown) to this file")
	flag.BoolVar(&c.decode, "minimal-decode", false, "the minimal store decodes the messages it reads (newest-N, search) into loom.Message (with loom's JSON library), as a store returning messages must; else it hands back the JSON it stored")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the measurements to this file")
	ops := flag.String("ops", "", "measure only the operations whose names match this regular expression")
	load := flag.Bool("load", false, "instead: run the load (writers in two processes on one store) on SQLite and PostgreSQL")
	loadMessages := flag.Int("load-messages", 100000, "messages the load writes in all")
	copyStores := flag.Bool("copy", false, "instead: copy a generated SQLite store to PostgreSQL and back with loom session export and import")
	copyMessages := flag.Int("copy-messages", 100000, "messages in the store -copy copies")
	agents := flag.Bool("agents", false, "instead: import other agents' session files (a corpus copied from -samples)")
	agentsMB := flag.Int("agents-mb", 100, "size of the corpus -agents imports, in MB")
	agentsFiles := flag.Int("agents-files", 1000, "least number of files in the corpus -agents imports")
	samplesDir := flag.String("samples", "testdata/agent-sessions", "the sample session files -agents copies")
	pg := flag.String("postgres", defaultPostgres, "PostgreSQL server for -load, -copy and -pg (a schema is made and dropped); empty for SQLite only")
	pgRun := flag.Bool("pg", false, "instead: measure bulk import and search on PostgreSQL (-postgres), the searches over -sessions × -messages messages generated once into -pg-schema")
	pgSchema := flag.String("pg-schema", "loombench_search", "schema of -postgres that holds the store -pg searches; generated when empty, kept for later runs")
	pgImport := flag.Int("pg-import", 100000, "messages -pg imports for its bulk import figure")
	syncRun := flag.Bool("sync", false, "instead: measure sync's budgets: initial sync of -sync-messages messages through a hub, one more turn, the log's size")
	syncMessages := flag.Int("sync-messages", 100000, "messages in the store -sync and -sync-cli sync")
	syncCLI := flag.Bool("sync-cli", false, "instead: measure `loom sync` as whole processes on two machines' stores: initial sync of -sync-messages messages, one more turn")
	mcpServe := flag.Bool("mcp-serve", false, "instead: drive /mcp of `loom serve` (its own process) with -mcp-clients clients for -mcp-duration and report the server's RSS")
	mcpClients := flag.Int("mcp-clients", 50, "concurrent /mcp clients of -mcp-serve")
	mcpDuration := flag.Duration("mcp-duration", 30*time.Second, "how long -mcp-serve drives /mcp")
	usage := flag.Bool("usage", false, "instead: measure the daily usage report over -usage-messages messages on SQLite and PostgreSQL (-postgres)")
	usageMessages := flag.Int("usage-messages", 1000000, "messages in the stores -usage generates (once) and reports on")
	process := flag.Bool("process", false, "instead: time loom version, session list, search, the import hook on an unchanged file and loom mcp's first search as whole processes, each beside a minimal Go program doing the same (cmd/loom-bench/floor), in pairs")
	processRuns := flag.Int("process-runs", 20, "timed pairs of each -process command")
	statusline := flag.Bool("statusline", false, "instead: time `loom usage statusline` as a whole process over -statusline-sessions Claude Code sessions (generated once), beside a minimal program reading the same roll-up")
	statuslineSessions := flag.Int("statusline-sessions", 100000, "sessions in the store -statusline generates (once)")
	locomo := flag.String("locomo", "", "instead: measure search on LoCoMo, from this locomo10.json (see docs/search.md)")
	longmemeval := flag.String("longmemeval", "", "instead: measure search on LongMemEval, from this longmemeval_s_cleaned.json (see docs/search.md)")
	realtalk := flag.String("realtalk", "", "instead: measure search on REALTALK, from this directory of its Chat_*.json (its repository's data/; see docs/search.md)")
	skipAbstention := flag.Bool("skip-abstention", true, "-longmemeval leaves out the questions meant to have no answer")
	bare := flag.Bool("bare", false, "-locomo and -longmemeval write lines as deja-vu's harnesses do (no uuid, no working directory), a store per conversation")
	retrievalPG := flag.Bool("retrieval-postgres", false, "-locomo and -longmemeval store on PostgreSQL (-postgres) instead of SQLite")
	retrievalLimit := flag.Int("retrieval-limit", 20, "hits each question's search asks for (loom search's default)")
	ranks := flag.String("ranks", "", "-scale writes each question's rank in each scope (the place of its evidence's session, 0 when not in the hits) and recall's (the place of its first turn of that session, 0 when none is in the answer) to this file, one JSON line each")
	misses := flag.String("misses", "", "-locomo and -longmemeval write each question not answered first to this file, one JSON line each; -scale each question whose first hit is in another planted conversation")
	embed := flag.String("embed", "", "-locomo and -longmemeval also rank by keywords and meaning fused: an embeddings API's URL (with /v1), or a stand-in served here: hash (a hashed bag of word stems) or unrelated (a random vector per text)")
	embedModel := flag.String("embed-model", "", "the model -embed asks for (nomic-embed-text; a stand-in's name for a stand-in)")
	captureRun := flag.Bool("capture", false, "instead: measure capture's latency: `loom capture run` as its own process, -capture-sessions sessions of Claude Code, Codex and Gemini CLI written into their directories about -capture-gap apart, each timed from its writing to its import recorded in the store, beside a file notification watcher told of the same writes")
	captureSessions := flag.Int("capture-sessions", 300, "sessions -capture writes")
	captureGap := flag.Duration("capture-gap", 500*time.Millisecond, "mean gap between two sessions -capture writes")
	hubRun := flag.Bool("hub", false, "instead: run a team's load on a hub of two loom serve processes on PostgreSQL (-postgres): -hub-members members × -hub-machines machines, -hub-records records of history, -hub-rounds rounds of sync by every machine at once, one process killed (SIGKILL) in round 2; push and pull p50/p99, hub CPU per sync, hub RSS, and a count of what was lost or duplicated")
	hubMembers := flag.Int("hub-members", 200, "members of the team -hub loads")
	hubMachines := flag.Int("hub-machines", 2, "machines of each member -hub loads")
	hubRecords := flag.Int("hub-records", 1000000, "records of the team's history -hub loads before its rounds")
	hubRounds := flag.Int("hub-rounds", 4, "rounds of sync -hub runs (at least 3)")
	blameRun := flag.Bool("blame", false, "instead: time loom blame of -blame-file in the work tree -blame-repo as whole processes (-loom), cold and repeated, with stores of -blame-editors sessions that edited the file, beside plain git blame in the same run")
	blameRepo := flag.String("blame-repo", "", "the git work tree -blame blames in")
	blameFile := flag.String("blame-file", "", "the file of -blame-repo -blame blames")
	blameEditors := flag.String("blame-editors", "3,450,1500", "the counts of sessions that edited the file, a store each (generated once under -db's directory)")
	blameRuns := flag.Int("blame-runs", 7, "rounds of -blame")
	blameDir := flag.String("blame-dir", "", "instead: time loom blame summary of this directory of -blame-repo as whole processes (-loom: binaries by commas, each in turn), cold and repeated, against the store of -blame-home, beside git blame of the same files in the same run")
	blamePR := flag.String("blame-pr", "", "instead: time loom blame pr of this range (BASE..HEAD) of -blame-repo as whole processes (-loom: binaries by commas, each in turn), cold and repeated, against the store of -blame-home, beside git blame at HEAD of the files it added or changed in the same run")
	blameFirst := flag.String("blame-first", "", "instead: time the first loom blame of this file of -blame-repo (its cache entries removed, the cache kept) and a repeat as whole processes, wall and CPU (-loom: binaries by commas, each in turn, each with a copy of -blame-home), beside git blame of it in the same round")
	blameHome := flag.String("blame-home", "", "the HOME of -blame-dir's loom processes, whose store holds the repository's sessions")
	keep := flag.Bool("keep", false, "-locomo and -longmemeval keep the session files and store they made")
	scale := flag.Bool("scale", false, "instead: plant -locomo's and -realtalk's conversations in a store of -scale-messages filler messages over -scale-projects projects of several agents, and ask every question in its project and across all projects (see docs/search.md)")
	scaleStore := flag.String("scale-store", filepath.Join(os.TempDir(), "loom-bench", "scale.db"), "the SQLite store -scale builds once and reuses")
	scaleMessages := flag.Int("scale-messages", 1000000, "filler messages of the store -scale builds")
	scaleProjects := flag.Int("scale-projects", 1000, "projects of the filler of -scale")
	scaleEvery := flag.Int("scale-every", 1, "-scale asks every n-th question on SQLite (0: SQLite is left out)")
	scaleScopes := flag.String("scale-scopes", "", "-scale asks each question in this scope only: \"per project\" or \"all projects\" (default both)")
	scaleTogether := flag.Bool("scale-together", false, "-scale plants every conversation in one store, even those in which one person talks to different friends (REALTALK's); by default those go to stores of their own (see docs/search.md)")
	scalePG := flag.Bool("scale-postgres", false, "-scale also builds (once, in -scale-pg-schema of -postgres) and asks the store on PostgreSQL")
	scalePGSchema := flag.String("scale-pg-schema", "loombench_scale", "the schema of -postgres that keeps -scale's PostgreSQL store")
	scalePGMessages := flag.Int("scale-pg-messages", 1000000, "filler messages of -scale's PostgreSQL store")
	scalePGEvery := flag.Int("scale-pg-every", 1, "-scale asks every n-th question on PostgreSQL")
	scaleCommand := flag.Bool("scale-command", true, "-scale also runs each recall as a whole command, loom recall --json (-a across all projects), in the conversation's directory (loom from -loom, or built from ./cmd/loom)")
	deja := flag.String("deja", "", "instead: time a whole loom search process against a whole deja search process (this deja binary, github.com/vshulcz/deja-vu) per question of -locomo and -realtalk, across all projects, in turns")
	dejaEvery := flag.Int("deja-every", 1, "-deja asks every n-th question")
	growth := flag.Bool("import-growth", false, "instead: import a generated history of many small Claude Code sessions into fresh stores at -import-growth-sizes times -import-growth-base sessions, each import its own process, on SQLite and PostgreSQL (-postgres): sessions, messages, wall, CPU, peak memory, disk, and the ratio between sizes")
	growthBase := flag.Int("import-growth-base", 1500, "sessions of -import-growth's 1× history")
	growthSizes := flag.String("import-growth-sizes", "1,4,16", "-import-growth's sizes, as multiples of -import-growth-base")
	growthEngines := flag.String("import-growth-engines", "sqlite,postgres", "the engines -import-growth imports into")
	growthChildCorpus := flag.String("import-growth-child", "", "(internal) import this corpus and print its row as JSON")
	growthEngine := flag.String("import-growth-engine", "sqlite", "(internal) the engine of -import-growth-child")
	growthStore := flag.String("import-growth-store", "", "(internal) the store of -import-growth-child: a file, or a PostgreSQL schema")
	growthKeep := flag.Bool("import-growth-keep", false, "-import-growth-child keeps the PostgreSQL schema it imported into, to look at its plans")
	importPeers := flag.String("import-peers", "", "-import-growth and -import-history also import the same files with these peers, name=binary pairs: agentsview=PATH (wesm/agentsview: its server's sync, timed to \"Sync complete\"), deja=PATH (vshulcz/deja-vu: deja index)")
	history := flag.Bool("import-history", false, "instead: import a history of -import-history-mb MB of real-format Claude Code and Codex files, made from -samples with fresh ids, into a fresh SQLite store (a process of its own), in turns with -import-peers, -import-runs times")
	historyMB := flag.Int("import-history-mb", 327, "the size of -import-history's history, in MB")
	importRuns := flag.Int("import-runs", 3, "-import-history's runs")
	flag.Parse()
	peers, err := parsePeers(*importPeers)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	if *history {
		o := historyOptions{mb: *historyMB, samples: *samplesDir, dir: filepath.Dir(c.db), runs: *importRuns, peers: peers, out: c.out}
		if err := os.MkdirAll(o.dir, 0o700); err == nil {
			err = historyMain(context.Background(), os.Stdout, o)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if *growthChildCorpus != "" {
		if *cpuprofile != "" {
			if f, err := os.Create(*cpuprofile); err == nil {
				pprof.StartCPUProfile(f)
				defer pprof.StopCPUProfile()
			}
		}
		if err := growthImport(context.Background(), *growthEngine, *growthChildCorpus, *growthStore, *pg, *growthKeep); err != nil {
			pprof.StopCPUProfile()
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if *growth {
		o := growthOptions{base: *growthBase, server: *pg, dir: filepath.Dir(c.db), out: c.out, peers: peers}
		for _, f := range strings.Split(*growthSizes, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n <= 0 {
				fmt.Fprintf(os.Stderr, "bench: -import-growth-sizes %q: want multiples such as 1,4,16\n", *growthSizes)
				os.Exit(2)
			}
			o.factors = append(o.factors, n)
		}
		for _, e := range strings.Split(*growthEngines, ",") {
			if e = strings.TrimSpace(e); e == "postgres" && *pg == "" {
				continue
			}
			o.engines = append(o.engines, e)
		}
		if err := growthMain(context.Background(), os.Stdout, o); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if *deja != "" {
		err := os.MkdirAll(filepath.Dir(c.db), 0o700)
		var sets []*retrievalSet
		if err == nil {
			sets, err = readSets(*locomo, *realtalk)
		}
		if err == nil {
			err = dejaMain(context.Background(), os.Stdout, filepath.Dir(c.db), sets, dejaOptions{deja: *deja, loom: c.loomBin, every: *dejaEvery, out: c.out})
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if *scale {
		o := scaleOptions{store: *scaleStore, messages: *scaleMessages, projects: *scaleProjects, samples: *samplesDir,
			every: *scaleEvery, pgEvery: *scalePGEvery, pgSchema: *scalePGSchema, pgMessages: *scalePGMessages, limit: *retrievalLimit, out: c.out, scopes: *scaleScopes, misses: *misses, ranks: *ranks, together: *scaleTogether,
			command: *scaleCommand, loomBin: c.loomBin}
		if o.scopes != "" && o.scopes != "per project" && o.scopes != "all projects" {
			fmt.Fprintln(os.Stderr, "bench: -scale-scopes: \"per project\" or \"all projects\"")
			os.Exit(2)
		}
		if *cpuprofile != "" {
			if f, err := os.Create(*cpuprofile); err == nil {
				pprof.StartCPUProfile(f)
				defer pprof.StopCPUProfile()
			}
		}
		if *scalePG {
			o.postgres = *pg
		}
		err := os.MkdirAll(filepath.Dir(o.store), 0o700)
		var sets []*retrievalSet
		if err == nil {
			sets, err = readSets(*locomo, *realtalk)
		}
		if err == nil {
			err = scaleMain(context.Background(), os.Stdout, sets, o)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if *locomo != "" || *longmemeval != "" || *realtalk != "" {
		o := retrievalOptions{bare: *bare, limit: *retrievalLimit, misses: *misses, out: c.out, keep: *keep, embed: *embed, embedModel: *embedModel}
		if *retrievalPG {
			o.postgres = *pg
		}
		var set *retrievalSet
		var err error
		switch {
		case *locomo != "":
			set, err = readLoCoMo(*locomo)
		case *realtalk != "":
			set, err = readRealTalk(*realtalk)
		default:
			set, err = readLongMemEval(*longmemeval, *skipAbstention)
		}
		if err == nil {
			err = retrievalMain(context.Background(), os.Stdout, filepath.Dir(c.db), set, o)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if *hubRun {
		sh := hubShape{Members: *hubMembers, Machines: *hubMachines, Records: *hubRecords, Rounds: *hubRounds, Active: 10, PerPush: 5, BodyBytes: 2048}
		if err := hubLoadMain(context.Background(), os.Stdout, filepath.Dir(c.db), c.loomBin, *pg, sh); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if *blameFirst != "" {
		if err := blameFirstMain(context.Background(), os.Stdout, strings.Split(c.loomBin, ","), *blameRepo, *blameFirst, *blameHome, *blameRuns); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if *blameDir != "" || *blamePR != "" {
		if err := blameDirMain(context.Background(), os.Stdout, strings.Split(c.loomBin, ","), *blameRepo, *blameDir, *blamePR, *blameHome, *blameRuns); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if *blameRun {
		var editors []int
		for _, f := range strings.Split(*blameEditors, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n <= 0 {
				fmt.Fprintf(os.Stderr, "bench: -blame-editors %q: want counts such as 3,450,1500\n", *blameEditors)
				os.Exit(2)
			}
			editors = append(editors, n)
		}
		if err := blameMain(context.Background(), os.Stdout, filepath.Dir(c.db), c.loomBin, *blameRepo, *blameFile, editors, *blameRuns); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if *captureRun {
		if err := captureMain(context.Background(), os.Stdout, filepath.Dir(c.db), c.loomBin, *samplesDir, *captureSessions, *captureGap); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if *statusline {
		if err := statuslineMain(context.Background(), os.Stdout, filepath.Dir(c.db), *statuslineSessions, *processRuns, c.loomBin); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if *usage {
		if err := usageMain(context.Background(), c.out, filepath.Dir(c.db), *pg, *usageMessages, min(c.runs, 20)); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if *syncRun {
		if err := syncMain(context.Background(), os.Stdout, filepath.Dir(c.db), *syncMessages, 20); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if *syncCLI {
		if err := syncCLIMain(context.Background(), os.Stdout, filepath.Dir(c.db), c.loomBin, *syncMessages, 20); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if *mcpServe {
		if err := mcpServeMain(context.Background(), os.Stdout, filepath.Dir(c.db), c.loomBin, *mcpClients, *mcpDuration); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if *load {
		shape := loadShape{Messages: *loadMessages, Distinct: 50, Shared: 5, Procs: 2}
		if err := loadMain(context.Background(), os.Stdout, filepath.Dir(c.db), *pg, shape); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if *cpuprofile != "" && *agents {
		f, err := os.Create(*cpuprofile)
		if err == nil {
			pprof.StartCPUProfile(f)
			defer pprof.StopCPUProfile()
		}
	}
	if *agents {
		if err := agentsMain(context.Background(), os.Stdout, filepath.Dir(c.db), *samplesDir, *agentsMB, *agentsFiles); err != nil {
			pprof.StopCPUProfile()
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if *copyStores {
		if err := copyMain(context.Background(), os.Stdout, filepath.Dir(c.db), *pg, c.loomBin, *copyMessages); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if c.ops, err = regexp.Compile(*ops); err != nil {
		fmt.Fprintln(os.Stderr, "bench: -ops:", err)
		os.Exit(2)
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err == nil {
			pprof.StartCPUProfile(f)
			defer pprof.StopCPUProfile()
		}
	}
	if *process {
		c.runs = *processRuns
		if err := processMain(context.Background(), os.Stdout, c); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if *pgRun {
		b := pgBench{server: *pg, schema: *pgSchema, sessions: c.sessions, messages: c.messages, imports: *pgImport,
			runs: c.runs, ops: c.ops.MatchString, out: c.out}
		if err := pgBenchMain(context.Background(), b); err != nil {
			pprof.StopCPUProfile()
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(context.Background(), c); err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, c config) error {
	rep := &report{}
	fmt.Fprintf(os.Stderr, "store %s\n", c.db)
	bigID, importRate, err := ensureStore(ctx, c)
	if err != nil {
		return err
	}
	minPath := filepath.Join(filepath.Dir(c.db), "minimal.db")
	minBig, err := ensureMinimal(ctx, minPath, c)
	if err != nil {
		return err
	}
	// Sizes on disk, before anything is measured: each file checkpointed.
	var size, minSize int64
	if c.ops.MatchString("size on disk") {
		if size, err = sizeOnDisk(ctx, c.db); err != nil {
			return err
		}
		if minSize, err = sizeOnDisk(ctx, minPath); err != nil {
			return err
		}
	}
	st, err := sqlite.Open(ctx, c.db)
	if err != nil {
		return err
	}
	defer st.Close()
	base, err := openBaseline(c.db)
	if err != nil {
		return err
	}
	defer base.Close()
	mini, err := openMinimal(minPath)
	if err != nil {
		return err
	}
	defer mini.Close()
	mini.decode = c.decode
	var total int
	st.DB().QueryRow(`SELECT count(*) FROM messages`).Scan(&total)
	var nsess int
	st.DB().QueryRow(`SELECT count(*) FROM sessions`).Scan(&nsess)
	rep.scale = fmt.Sprintf("%d messages in %d sessions (one of %d messages); %s, %d cores, %s",
		total, nsess, c.big, runtime.GOOS+"/"+runtime.GOARCH, runtime.NumCPU(), runtime.Version())
	user := "bench"
	want := func(op string) bool { return c.ops.MatchString(op) }

	// Newest-50 of the big session.
	if want("newest-50") {
		rep.add(measure("newest-50 of the 100,000-message session", "median ≤ 0.5 ms", 0.5, c.runs,
			func() error { _, err := st.Messages(ctx, bigID, loom.MessageQuery{Limit: 50}); return err },
			func() error { return base.newest(ctx, bigID, 50) },
			func() error { return mini.newest(ctx, minBig, 50) }))
	}
	// List 50 most recent sessions.
	if want("list the 50") {
		rep.add(measure("list the 50 most recent sessions with counts and last prompt", "≤ 1 ms", 1, c.runs,
			func() error {
				_, err := st.Summaries(ctx, loom.SessionFilter{UserID: user, Limit: 50})
				return err
			},
			func() error { return base.list(ctx, user, 50) },
			func() error { return mini.list(ctx, user, 50) }))
	}
	// The session picker, over every project (all 10,000 sessions).
	if want("picker") {
		rep.add(measure("open the session picker to its first frame (first page and preview)", "≤ 100 ms", 100, max(c.runs/4, 20),
			func() error { return openPicker(ctx, st, user) },
			func() error { return base.list(ctx, user, 100) }))
	}
	// Search.
	if want("search, rare") {
		rep.add(measure("search, rare word, top 20 with snippets", "≤ 5 ms", 5, c.runs,
			func() error {
				h, err := st.Search(ctx, loom.SearchQuery{Text: RareWord, UserID: user, Limit: 20})
				return expectHits(h, err)
			},
			func() error { return base.search(ctx, user, `"`+RareWord+`"`, 20) },
			func() error { return mini.search(ctx, user, `"`+RareWord+`"`, 20) }))
	}
	// The same word with the later tiers turned off (Exact): the work
	// the minimal store does, its every-word match alone. A word of fewer
	// hits than a page goes on through the title and typo tiers above.
	if want("every-word tier of a rare word") {
		rep.add(measure("search, rare word, every-word tier alone (Exact), top 20 with snippets", "≤ 5 ms", 5, c.runs,
			func() error {
				h, err := st.Search(ctx, loom.SearchQuery{Text: RareWord, UserID: user, Limit: 20, Exact: true})
				return expectHits(h, err)
			},
			func() error { return base.search(ctx, user, `"`+RareWord+`"`, 20) },
			func() error { return mini.search(ctx, user, `"`+RareWord+`"`, 20) }))
	}
	if want("search, three") {
		common, err := loom.ParseQuery(CommonQuery)
		if err != nil {
			return err
		}
		rep.add(measure("search, three common words, top 20 with snippets", "≤ 50 ms", 50, max(c.runs/10, 10),
			func() error {
				h, err := st.Search(ctx, loom.SearchQuery{Text: CommonQuery, UserID: user, Limit: 20})
				return expectHits(h, err)
			},
			func() error { return base.search(ctx, user, sqlite.MatchExpr(common), 20) },
			func() error { return mini.search(ctx, user, sqlite.MatchExpr(common), 20) }))
	}
	// A query whose every word is in no one message goes down the tiers
	// (word forms, some words, prefix or typo) until a page is full: the
	// slowest plain search there is.
	if want("search, every tier") {
		common, err := loom.ParseQuery(CommonQuery)
		if err != nil {
			return err
		}
		queries := []string{"glacier carousel invoice ledger", "zyzzogetn throughput migratoin", "harbor goroutine receipt widgets"}
		n := 0
		rep.add(measureP99("search falling through every tier, top 20 with snippets", "p50 ≤ 50 ms, p99 ≤ 200 ms", 50, 200, max(c.runs/4, 20),
			func() error {
				n++
				h, err := st.Search(ctx, loom.SearchQuery{Text: queries[n%len(queries)], UserID: user, Limit: 20})
				return expectHits(h, err)
			},
			func() error { return base.search(ctx, user, sqlite.MatchExpr(common), 20) }))
	}
	// Recall as the agents' hooks ask it: a prompt, in one project of 50.
	if want("recall") {
		common, err := loom.ParseQuery(CommonQuery)
		if err != nil {
			return err
		}
		rep.add(measure("recall for a prompt in one project, 1,500 tokens", "≤ 100 ms", 100, max(c.runs/4, 20),
			recallOnce(ctx, st, user),
			func() error { return base.search(ctx, user, sqlite.MatchExpr(common), 20) }))
	}
	// Queries that once cost without bound.
	if want("hostile search") {
		rows, err := hostileSearches(ctx, st, user)
		if err != nil {
			return err
		}
		for _, r := range rows {
			rep.add(r)
		}
	}
	// The same searches as an agent makes them, through loom mcp's tool.
	if want("mcp") {
		mc, err := newMCPClient(ctx, st, user)
		if err != nil {
			return err
		}
		rep.add(measure("MCP search_sessions, rare word, top 20", "≤ 50 ms", 50, c.runs,
			func() error { return mc.search(ctx, RareWord) },
			func() error { return base.search(ctx, user, `"`+RareWord+`"`, 20) }))
		common, err := loom.ParseQuery(CommonQuery)
		if err != nil {
			return err
		}
		rep.add(measure("MCP search_sessions, three common words, top 20", "≤ 50 ms", 50, max(c.runs/10, 10),
			func() error { return mc.search(ctx, CommonQuery) },
			func() error { return base.search(ctx, user, sqlite.MatchExpr(common), 20) }))
		mc.Close()
	}
	// Cold open and read.
	if want("open the store") {
		rep.add(measure("open the store cold and read newest-50 of a session", "≤ 2 ms", 2, max(c.runs/4, 20),
			func() error {
				s, err := sqlite.Open(ctx, c.db)
				if err != nil {
					return err
				}
				defer s.Close()
				_, err = s.Messages(ctx, bigID, loom.MessageQuery{Limit: 50})
				return err
			},
			func() error {
				b, err := openBaseline(c.db)
				if err != nil {
					return err
				}
				defer b.Close()
				return b.newest(ctx, bigID, 50)
			},
			func() error {
				m, err := openMinimal(minPath)
				if err != nil {
					return err
				}
				defer m.Close()
				m.decode = c.decode
				return m.newest(ctx, minBig, 50)
			}))
	}
	// Durable single-message append.
	if want("durable") {
		if err := measureAppend(ctx, st, base, mini, rep, c.runs); err != nil {
			return err
		}
	}
	// Bulk import.
	if want("bulk import") {
		baseRate, err := baselineImportRate(ctx, filepath.Join(filepath.Dir(c.db), "baseline-import.db"), 100000)
		if err != nil {
			return err
		}
		rate, err := importRateOf(ctx, filepath.Join(filepath.Dir(c.db), "import.db"), 100000)
		if err != nil {
			return err
		}
		minRate, err := minimalImportRate(ctx, filepath.Join(filepath.Dir(c.db), "minimal-import.db"), 100000)
		if err != nil {
			return err
		}
		rep.addRate("bulk import, search index included", "≥ 25,000 messages/s", 25000, rate, baseRate, minRate)
	}
	// Fork of the big session; the forks are purged afterwards, untimed.
	// A fork copies nothing, so each fork costs what the first did. The
	// minimal store's fork copies every message and its index row, so
	// each of its forks is deleted, untimed, before the next is made: the
	// file holds one copy at a time.
	if want("fork") {
		var made, minMade []string
		rep.add(measureEach("fork of the 100,000-message session", "≤ 50 ms", 50, max(c.runs/10, 10),
			func() (func() error, error) {
				return func() error {
					f, err := st.Fork(ctx, bigID, loom.ForkOptions{})
					if err == nil {
						made = append(made, f.ID)
					}
					return err
				}, nil
			},
			func() (func() error, error) {
				return func() error {
					id, err := base.fork(ctx, bigID)
					made = append(made, id)
					return err
				}, nil
			},
			func() (func() error, error) {
				if err := mini.clear(ctx, &minMade); err != nil {
					return nil, err
				}
				return func() error {
					id, err := mini.fork(ctx, minBig)
					minMade = append(minMade, id)
					return err
				}, nil
			}))
		if err := purge(ctx, st, made); err != nil {
			return err
		}
		if err := mini.clear(ctx, &minMade); err != nil {
			return err
		}
	}
	// Rewind of the big session to turn 10. The big session itself must
	// stay whole for the other measurements, so each run rewinds a fork
	// of all of it, made untimed: a session of the same 100,000 messages,
	// read through one more span. Forks and rewound forks are purged
	// afterwards. The minimal store's rewind copies all of the session
	// into the fork it keeps and deletes the messages after the turn; what
	// each of its runs made is deleted, untimed, before the next.
	if want("rewind") {
		var made, minMade []string
		rep.add(measureEach("rewind of the 100,000-message session to turn 10", "≤ 50 ms", 50, max(c.runs/10, 10),
			func() (func() error, error) {
				f, err := st.Fork(ctx, bigID, loom.ForkOptions{})
				if err != nil {
					return nil, err
				}
				made = append(made, f.ID)
				return func() error {
					r, err := st.Rewind(ctx, f.ID, loom.RewindOptions{Turn: 10})
					if err == nil {
						made = append(made, r.ID)
					}
					return err
				}, nil
			},
			func() (func() error, error) {
				id, err := base.fork(ctx, bigID)
				if err != nil {
					return nil, err
				}
				made = append(made, id)
				return func() error {
					r, err := base.rewind(ctx, id, 10)
					made = append(made, r)
					return err
				}, nil
			},
			func() (func() error, error) {
				if err := mini.clear(ctx, &minMade); err != nil {
					return nil, err
				}
				id, err := mini.fork(ctx, minBig)
				if err != nil {
					return nil, err
				}
				minMade = append(minMade, id)
				return func() error {
					r, err := mini.rewind(ctx, id, 10)
					minMade = append(minMade, r)
					return err
				}, nil
			}))
		if err := purge(ctx, st, made); err != nil {
			return err
		}
		if err := mini.clear(ctx, &minMade); err != nil {
			return err
		}
	}
	// Whole-process list.
	if want("whole process") {
		if r, err := processList(ctx, c); err != nil {
			fmt.Fprintln(os.Stderr, "bench: whole-process list:", err)
		} else {
			rep.add(r)
		}
	}
	// Size on disk of the generated stores, measured before the rest.
	if want("size on disk") {
		rep.addSize("size on disk", "≤ 1.2× the minimal store", 1.2, size, minSize)
	}
	// Memory while resuming.
	if want("memory") {
		rep.addNote(resumeMemory(ctx, st, bigID, user))
	}
	rep.importNote = fmt.Sprintf("Bulk import is measured on 100,000 generated messages (100 sessions) into a fresh store, the generation untimed; while generating the whole store it ran at %s.", importNoteText(importRate))
	return rep.print(c.out)
}

// purge deletes the sessions a measurement made, for good.
func purge(ctx context.Context, st *sqlite.Store, ids []string) error {
	for _, id := range ids {
		if id == "" {
			continue
		}
		if _, err := st.Delete(ctx, id, loom.DeleteOptions{Purge: true}); err != nil && loom.ErrorCode(err) != loom.ENOTFOUND {
			return fmt.Errorf("purge %s: %w", id, err)
		}
	}
	return nil
}

func measureAppend(ctx context.Context, st *sqlite.Store, base *baseline, mini *minimal, rep *report, runs int) error {
	g := newGenerator(42)
	appendSession := &loom.Session{ID: loom.NewID(), UserID: "bench-append", Key: "cli:append:" + loom.NewID()}
	if err := st.Append(ctx, appendSession, textMsg(g.text())); err != nil {
		return err
	}
	baseSession := loom.NewID()
	if err := st.Append(ctx, &loom.Session{ID: baseSession, UserID: "bench-append", Key: "cli:append-base:" + loom.NewID()}, textMsg(g.text())); err != nil {
		return err
	}
	minSession, err := mini.newSession(ctx, "bench-append")
	if err != nil {
		return err
	}
	texts := make([]string, 4096)
	for i := range texts {
		texts[i] = g.text()
	}
	i := 0
	rep.add(measureP99("durable single-message append (own transaction, index included)", "median ≤ 0.5 ms, p99 ≤ 5 ms", 0.5, 5, runs*2,
		func() error { i++; return st.Append(ctx, appendSession, textMsg(texts[i%len(texts)])) },
		func() error { i++; return base.append(ctx, baseSession, texts[i%len(texts)]) },
		func() error { i++; return mini.append(ctx, minSession, texts[i%len(texts)]) }))
	return nil
}
