//go:build ignore

// gen_litellm writes litellm.json, the bundled price list, from a copy of
// LiteLLM's model_prices_and_context_window.json:
//
//	go run gen_litellm.go -in model_prices_and_context_window.json -source "LiteLLM 0cd588ad" -date 2026-07-24
package main

import (
	"flag"
	"log"
	"os"

	"github.com/loomhq/loom/pricing"
)

func main() {
	in := flag.String("in", "", "LiteLLM's model_prices_and_context_window.json")
	source := flag.String("source", "", "where it comes from, with the commit")
	date := flag.String("date", "", "the day it was taken, YYYY-MM-DD")
	out := flag.String("out", "litellm.json", "the list to write")
	flag.Parse()
	f, err := os.Open(*in)
	if err != nil {
		log.Fatal(err)
	}
	l, err := pricing.ParseLiteLLM(f, *source, *date)
	if err != nil {
		log.Fatal(err)
	}
	w, err := os.Create(*out)
	if err != nil {
		log.Fatal(err)
	}
	if err := l.WriteList(w); err != nil {
		log.Fatal(err)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
	log.Printf("%d models", len(l.Entries))
}
