package pricing

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
)

// LiteLLMURL is where LiteLLM keeps its list of model prices, the one
// `loom usage prices --update` fetches.
const LiteLLMURL = "https://raw.githubusercontent.com/BerriAI/litellm/main/model_prices_and_context_window.json"

// List is a list of model prices taken from one source at one time: the
// snapshot of LiteLLM's list bundled in loom, or one fetched since.
type List struct {
	// Source says where the prices come from ("LiteLLM 0cd588ad").
	Source string `json:"source"`
	// Date is the day they were taken (2026-07-24).
	Date    string  `json:"date"`
	Entries []Entry `json:"-"`
}

// listEntry is a model of a list as WriteList writes it.
type listEntry struct {
	Provider string `json:"provider"`
	Model    string `json:"model"`
	Price
}

// litellmModel is the part of a LiteLLM entry loom prices with: per
// token in US dollars; the _above_200k_tokens prices are those of a
// request whose prompt is above 200,000 tokens.
type litellmModel struct {
	Provider        string   `json:"litellm_provider"`
	Mode            string   `json:"mode"`
	Input           *float64 `json:"input_cost_per_token"`
	Output          *float64 `json:"output_cost_per_token"`
	CacheRead       *float64 `json:"cache_read_input_token_cost"`
	CacheWrite      *float64 `json:"cache_creation_input_token_cost"`
	CacheWrite1h    *float64 `json:"cache_creation_input_token_cost_above_1hr"`
	LongInput       *float64 `json:"input_cost_per_token_above_200k_tokens"`
	LongOutput      *float64 `json:"output_cost_per_token_above_200k_tokens"`
	LongCacheRead   *float64 `json:"cache_read_input_token_cost_above_200k_tokens"`
	LongCacheWrite  *float64 `json:"cache_creation_input_token_cost_above_200k_tokens"`
	LongCacheWrite1 *float64 `json:"cache_creation_input_token_cost_above_1hr_above_200k_tokens"`
}

// litellmProviders names LiteLLM's providers as loom's providers are
// named, where they differ.
var litellmProviders = map[string]string{
	"text-completion-openai": "openai",
	"gemini":                 "google",
}

// maxListBytes bounds a price list read from a file or the network
// (LiteLLM's is under 2 MB).
const maxListBytes = 64 << 20

// ParseLiteLLM reads LiteLLM's model price list: every model of a chat,
// responses or completion mode with an input and an output price, as
// prices per million tokens under loom's provider names. A cache price
// the list leaves out is the input price (the provider bills such
// tokens as input); a 1-hour cache write left out costs a 5-minute one.
func ParseLiteLLM(r io.Reader, source, date string) (*List, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxListBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxListBytes {
		return nil, fmt.Errorf("the price list is larger than %d MB", maxListBytes>>20)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("not LiteLLM's price list: %w", err)
	}
	l := &List{Source: source, Date: date}
	for key, body := range raw {
		var m litellmModel
		if json.Unmarshal(body, &m) != nil || m.Provider == "" || !priced(m.Input) || !priced(m.Output) {
			continue
		}
		switch m.Mode {
		case "chat", "responses", "completion", "":
		default:
			continue
		}
		provider := strings.ToLower(m.Provider)
		model := strings.ToLower(strings.TrimPrefix(key, m.Provider+"/"))
		if p, ok := litellmProviders[provider]; ok {
			provider = p
		}
		l.Entries = append(l.Entries, Entry{Provider: provider, Model: model, Price: m.price()})
	}
	if len(l.Entries) == 0 {
		return nil, fmt.Errorf("the price list names no priced model")
	}
	sort.Slice(l.Entries, func(i, j int) bool {
		a, b := l.Entries[i], l.Entries[j]
		if a.Provider != b.Provider {
			return a.Provider < b.Provider
		}
		return a.Model < b.Model
	})
	return l, nil
}

// priced reports whether p is a price per token: above zero, and at
// most a dollar (a million dollars per million tokens), past which a
// figure is an error of the list's.
func priced(p *float64) bool { return p != nil && *p > 0 && *p <= 1 }

// price is m's price per million tokens.
func (m litellmModel) price() Price {
	per := func(p *float64, or float64) float64 {
		if p == nil || !(*p == 0 || priced(p)) {
			return or
		}
		return million(*p)
	}
	p := Price{Input: million(*m.Input), Output: million(*m.Output)}
	p.CacheRead = per(m.CacheRead, p.Input)
	p.CacheWrite = per(m.CacheWrite, p.Input)
	p.CacheWrite1h = per(m.CacheWrite1h, 0)
	if m.LongInput != nil || m.LongOutput != nil {
		long := Price{Input: per(m.LongInput, p.Input), Output: per(m.LongOutput, p.Output)}
		// A cache price the list gives for short prompts only holds
		// for long ones too; one it gives for neither is the long
		// input price, as it is the input price of short ones.
		orInput := func(base *float64, short float64) float64 {
			if base == nil {
				return long.Input
			}
			return short
		}
		long.CacheRead = per(m.LongCacheRead, orInput(m.CacheRead, p.CacheRead))
		long.CacheWrite = per(m.LongCacheWrite, orInput(m.CacheWrite, p.CacheWrite))
		long.CacheWrite1h = per(m.LongCacheWrite1, 0)
		p.LongContext = &long
	}
	return p
}

// million is a price per token as a price per million tokens, rounded
// to what a price list writes (3e-06 is 3, not 2.9999999999999996).
func million(perToken float64) float64 {
	return math.Round(perToken*1e6*1e9) / 1e9
}

// ReadList reads a list as WriteList wrote it.
func ReadList(r io.Reader) (*List, error) {
	var in struct {
		List
		Models []listEntry `json:"models"`
	}
	dec := json.NewDecoder(io.LimitReader(r, maxListBytes))
	if err := dec.Decode(&in); err != nil {
		return nil, fmt.Errorf("read the price list: %w", err)
	}
	if len(in.Models) == 0 {
		return nil, fmt.Errorf("read the price list: it names no model")
	}
	l := in.List
	l.Entries = make([]Entry, len(in.Models))
	for i, m := range in.Models {
		l.Entries[i] = Entry{Provider: strings.ToLower(m.Provider), Model: strings.ToLower(m.Model), Price: m.Price}
	}
	return &l, nil
}

// WriteList writes l compactly, one model a line, for ReadList.
func (l *List) WriteList(w io.Writer) error {
	var b bytes.Buffer
	head, err := json.Marshal(struct {
		Source string `json:"source"`
		Date   string `json:"date"`
	}{l.Source, l.Date})
	if err != nil {
		return err
	}
	b.Write(head[:len(head)-1])
	b.WriteString(`,"models":[`)
	for i, e := range l.Entries {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
		line, err := json.Marshal(listEntry{e.Provider, e.Model, e.Price})
		if err != nil {
			return err
		}
		b.Write(line)
	}
	b.WriteString("\n]}\n")
	_, err = w.Write(b.Bytes())
	return err
}
