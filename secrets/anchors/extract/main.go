// Command extract writes the test cases of TruffleHog's detectors as
// JSON lines, for secrets/anchors: it reads the pattern tests of a
// checkout of TruffleHog (pkg/detectors/*/*_test.go, not the
// integration tests), evaluates each case's `input` and `want` where
// they are built from constants, string literals, concatenation and
// fmt.Sprintf, and prints one object per case: the detector, the test's
// name, the input, and the values the detector must find in it (none:
// a case the detector must not flag).
//
//	go run ./secrets/anchors/extract -trufflehog DIR > secrets/anchors/testdata/trufflehog.jsonl
//
// Cases it cannot evaluate are counted on stderr and left out.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Case is one test case of a detector.
type Case struct {
	Detector string   `json:"detector"`
	Name     string   `json:"name"`
	Input    string   `json:"input"`
	Want     []string `json:"want"`
}

func main() {
	dir := flag.String("trufflehog", "", "a checkout of github.com/trufflesecurity/trufflehog")
	flag.Parse()
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "usage: extract -trufflehog DIR")
		os.Exit(2)
	}
	files, err := filepath.Glob(filepath.Join(*dir, "pkg", "detectors", "*", "*_test.go"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	sort.Strings(files)
	enc := json.NewEncoder(os.Stdout)
	enc.SetEscapeHTML(false)
	var kept, skipped int
	for _, f := range files {
		if strings.HasSuffix(f, "_integration_test.go") {
			continue
		}
		cases, n, err := extract(f)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", f, err)
			continue
		}
		skipped += n
		for _, c := range cases {
			if err := enc.Encode(c); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			kept++
		}
	}
	fmt.Fprintf(os.Stderr, "%d cases kept, %d not evaluated\n", kept, skipped)
}

// env is what a file's constants and variables hold, where they are
// strings.
type env map[string]string

func extract(path string) ([]Case, int, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, 0)
	if err != nil {
		return nil, 0, err
	}
	detector := filepath.Base(filepath.Dir(path))
	global := env{}
	collect(global, f)
	var cases []Case
	skipped := 0
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Body == nil || !strings.HasPrefix(fn.Name.Name, "Test") || !strings.Contains(fn.Name.Name, "Pattern") {
			continue
		}
		local := env{}
		for k, v := range global {
			local[k] = v
		}
		// Constants and variables of the test function itself.
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.DeclStmt:
				if g, ok := x.Decl.(*ast.GenDecl); ok {
					collectGen(local, g)
				}
			case *ast.AssignStmt:
				if len(x.Lhs) == len(x.Rhs) {
					for i, l := range x.Lhs {
						if id, ok := l.(*ast.Ident); ok {
							if s, ok := eval(local, x.Rhs[i]); ok {
								local[id.Name] = s
							}
						}
					}
				}
			}
			return true
		})
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			cl, ok := n.(*ast.CompositeLit)
			if !ok {
				return true
			}
			var name, input string
			var want []string
			var hasInput, hasWant, bad bool
			for _, e := range cl.Elts {
				kv, ok := e.(*ast.KeyValueExpr)
				if !ok {
					continue
				}
				key, ok := kv.Key.(*ast.Ident)
				if !ok {
					continue
				}
				switch key.Name {
				case "name":
					name, _ = eval(local, kv.Value)
				case "input":
					hasInput = true
					s, ok := eval(local, kv.Value)
					if !ok {
						bad = true
					}
					input = s
				case "want":
					hasWant = true
					w, ok := evalList(local, kv.Value)
					if !ok {
						bad = true
					}
					want = w
				}
			}
			if !hasInput || !hasWant {
				return true
			}
			if bad {
				skipped++
				return false
			}
			cases = append(cases, Case{Detector: detector, Name: name, Input: input, Want: want})
			return false
		})
	}
	return cases, skipped, nil
}

func collect(e env, f *ast.File) {
	// Twice, so that a constant defined from a later one is found.
	for range 2 {
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok {
				collectGen(e, g)
			}
		}
	}
}

func collectGen(e env, g *ast.GenDecl) {
	if g.Tok != token.CONST && g.Tok != token.VAR {
		return
	}
	for _, s := range g.Specs {
		vs, ok := s.(*ast.ValueSpec)
		if !ok {
			continue
		}
		for i, n := range vs.Names {
			if i < len(vs.Values) {
				if v, ok := eval(e, vs.Values[i]); ok {
					e[n.Name] = v
				}
			}
		}
	}
}

func evalList(e env, x ast.Expr) ([]string, bool) {
	switch v := x.(type) {
	case *ast.Ident:
		if v.Name == "nil" {
			return nil, true
		}
	case *ast.CompositeLit:
		var out []string
		for _, el := range v.Elts {
			s, ok := eval(e, el)
			if !ok {
				return nil, false
			}
			out = append(out, s)
		}
		return out, true
	}
	return nil, false
}

func eval(e env, x ast.Expr) (string, bool) {
	switch v := x.(type) {
	case *ast.BasicLit:
		switch v.Kind {
		case token.STRING, token.CHAR:
			s, err := strconv.Unquote(v.Value)
			return s, err == nil
		case token.INT, token.FLOAT:
			return v.Value, true
		}
	case *ast.Ident:
		s, ok := e[v.Name]
		return s, ok
	case *ast.ParenExpr:
		return eval(e, v.X)
	case *ast.BinaryExpr:
		if v.Op != token.ADD {
			return "", false
		}
		a, ok := eval(e, v.X)
		if !ok {
			return "", false
		}
		b, ok := eval(e, v.Y)
		return a + b, ok
	case *ast.CallExpr:
		return evalCall(e, v)
	}
	return "", false
}

// evalCall evaluates a call: string(x), or a function of fmt or
// strings whose arguments evaluate.
func evalCall(e env, v *ast.CallExpr) (string, bool) {
	sel, ok := v.Fun.(*ast.SelectorExpr)
	if !ok {
		// string(x) and []byte(x)
		if id, ok := v.Fun.(*ast.Ident); ok && id.Name == "string" && len(v.Args) == 1 {
			return eval(e, v.Args[0])
		}
		return "", false
	}
	pkg, _ := sel.X.(*ast.Ident)
	if pkg == nil {
		return "", false
	}
	args := make([]string, len(v.Args))
	for i, a := range v.Args {
		s, ok := eval(e, a)
		if !ok {
			return "", false
		}
		args[i] = s
	}
	return callFunc(pkg.Name+"."+sel.Sel.Name, args)
}

// callFunc is what the function named fn (fmt.Sprintf, strings.Repeat
// …) returns for args, when it is one eval knows.
func callFunc(fn string, args []string) (string, bool) {
	switch fn {
	case "fmt.Sprintf":
		if len(args) == 0 {
			return "", false
		}
		vals := make([]any, len(args)-1)
		for i, a := range args[1:] {
			vals[i] = a
		}
		// Numbers are kept as their text, so %d would print
		// "%!d(string=…)": read them as %s.
		format := strings.NewReplacer("%d", "%s", "%q", "%q").Replace(args[0])
		return fmt.Sprintf(format, vals...), true
	case "strings.Repeat":
		if len(args) != 2 {
			return "", false
		}
		n, err := strconv.Atoi(args[1])
		if err != nil || n > 10000 {
			return "", false
		}
		return strings.Repeat(args[0], n), true
	case "strings.Join":
		return "", false
	case "strings.TrimSpace":
		if len(args) == 1 {
			return strings.TrimSpace(args[0]), true
		}
	case "strings.ToUpper":
		if len(args) == 1 {
			return strings.ToUpper(args[0]), true
		}
	case "strings.ToLower":
		if len(args) == 1 {
			return strings.ToLower(args[0]), true
		}
	}
	return "", false
}
