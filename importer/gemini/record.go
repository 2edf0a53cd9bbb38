package gemini

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/loomhq/loom/handoff"
	"github.com/loomhq/loom/importer"
)

// header is a recording's metadata: the first line of a JSONL file, the
// fields of a one-document file, and what $set lines change.
type header struct {
	SessionID   string   `json:"sessionId"`
	ProjectHash string   `json:"projectHash"`
	StartTime   string   `json:"startTime"`
	LastUpdated string   `json:"lastUpdated"`
	Summary     *string  `json:"summary"`
	Directories []string `json:"directories"`
	ProjectRoot string   `json:"projectRoot"`
	Kind        string   `json:"kind"`
	// LoomHandoff marks a session loom wrote for Gemini CLI to continue
	// (handoff.OriginField).
	LoomHandoff *handoff.Origin `json:"loomHandoff"`
}

// message is one conversation record: a user prompt, a model reply, or a
// notice the CLI showed (info, error, warning).
type message struct {
	ID             string          `json:"id"`
	Type           string          `json:"type"`
	Timestamp      string          `json:"timestamp"`
	Content        json.RawMessage `json:"content"`
	DisplayContent json.RawMessage `json:"displayContent"`
	Thoughts       []thought       `json:"thoughts"`
	Tokens         *tokens         `json:"tokens"`
	Model          string          `json:"model"`
	ToolCalls      []toolCall      `json:"toolCalls"`

	// pos names where the record was read, for a message without an id
	// ("line-12", "line-12-3" for the fourth of a list on line 12,
	// "msg-3" in a one-document file); line is its 1-based line, 0 in a
	// one-document file.
	pos  string
	line int
}

// modelType names a model reply "gemini" whatever the program that
// recorded it: Qwen Code's early recordings (0.1.x, the same document
// under ~/.qwen/tmp) call it "qwen".
func (m *message) modelType() {
	if m.Type == "qwen" {
		m.Type = "gemini"
	}
}

type thought struct {
	Subject     string `json:"subject"`
	Description string `json:"description"`
	Timestamp   string `json:"timestamp"`
}

// tokens is the usage of one model call as Gemini's API reports it:
// input (promptTokenCount) includes cached; output
// (candidatesTokenCount) excludes thoughts; tool is
// toolUsePromptTokenCount.
type tokens struct {
	Input    int64 `json:"input"`
	Output   int64 `json:"output"`
	Cached   int64 `json:"cached"`
	Thoughts int64 `json:"thoughts"`
	Tool     int64 `json:"tool"`
	Total    int64 `json:"total"`
}

type toolCall struct {
	ID            string          `json:"id"`
	Name          string          `json:"name"`
	Args          json.RawMessage `json:"args"`
	Result        json.RawMessage `json:"result"`
	Status        string          `json:"status"`
	Timestamp     string          `json:"timestamp"`
	AgentID       string          `json:"agentId"`
	DisplayName   string          `json:"displayName"`
	Description   string          `json:"description"`
	ResultDisplay json.RawMessage `json:"resultDisplay"`
}

// record is any line of a JSONL recording, or a whole one-document
// recording: which fields are set says what it is.
type record struct {
	header
	message
	RewindTo json.RawMessage `json:"$rewindTo"`
	Set      json.RawMessage `json:"$set"`
	Messages json.RawMessage `json:"messages"`
	// Document marks the header line of a one-document recording
	// written as lines (document.go).
	Document bool `json:"loomDocument"`
}

// setRecord is the object of a $set line.
type setRecord struct {
	header
	Messages json.RawMessage `json:"messages"`
}

// part is one element of a Gemini API content list (PartListUnion): a
// plain string or an object with one of these fields.
type part struct {
	Text             *string           `json:"text"`
	Thought          bool              `json:"thought"`
	InlineData       *blob             `json:"inlineData"`
	FileData         *fileData         `json:"fileData"`
	FunctionCall     *functionCall     `json:"functionCall"`
	FunctionResponse *functionResponse `json:"functionResponse"`

	// other is the first field of a part of none of the kinds above.
	other string
}

type blob struct {
	MimeType string `json:"mimeType"`
	Data     string `json:"data"`
}

type fileData struct {
	MimeType string `json:"mimeType"`
	FileURI  string `json:"fileUri"`
}

type functionCall struct {
	ID   string          `json:"id"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

type functionResponse struct {
	ID       string          `json:"id"`
	Name     string          `json:"name"`
	Response json.RawMessage `json:"response"`
}

// parts decodes a PartListUnion: a string, one part, or a list of
// strings and parts.
func parts(raw json.RawMessage) ([]part, error) {
	raw = bytes.TrimSpace(raw)
	if importer.IsNull(raw) {
		return nil, nil
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		return []part{{Text: &s}}, nil
	case '{':
		p, err := decodePart(raw)
		if err != nil {
			return nil, err
		}
		return []part{p}, nil
	case '[':
		var list []json.RawMessage
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, err
		}
		out := make([]part, 0, len(list))
		for i, el := range list {
			p, err := decodeElement(el)
			if err != nil {
				return nil, fmt.Errorf("part %d: %w", i, err)
			}
			out = append(out, p)
		}
		return out, nil
	}
	return nil, fmt.Errorf("content is neither text nor parts")
}

func decodeElement(raw json.RawMessage) (part, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return part{}, err
		}
		return part{Text: &s}, nil
	}
	return decodePart(raw)
}

func decodePart(raw json.RawMessage) (part, error) {
	var p part
	if err := json.Unmarshal(raw, &p); err != nil {
		return part{}, err
	}
	if p.Text == nil && p.InlineData == nil && p.FileData == nil && p.FunctionCall == nil && p.FunctionResponse == nil {
		p.other = firstKey(raw)
	}
	return p, nil
}

// firstKey returns the first field name of a JSON object, "" if it has
// none.
func firstKey(raw json.RawMessage) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return ""
	}
	t, err := dec.Token()
	if err != nil {
		return ""
	}
	k, _ := t.(string)
	return k
}

// text joins the text parts of ps that are not thoughts.
func text(ps []part) string {
	var b bytes.Buffer
	for _, p := range ps {
		if p.Text != nil && !p.Thought && *p.Text != "" {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(*p.Text)
		}
	}
	return b.String()
}

// resultText turns a tool call's result (the function responses and any
// other parts sent back to the model) into the text of its output and of
// its error.
func resultText(raw json.RawMessage) (out, errText string, err error) {
	ps, err := parts(raw)
	if err != nil {
		return "", "", err
	}
	var ob, eb bytes.Buffer
	add := func(b *bytes.Buffer, s string) {
		if s == "" {
			return
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(s)
	}
	for _, p := range ps {
		switch {
		case p.FunctionResponse != nil:
			o, e := responseText(p.FunctionResponse.Response)
			add(&ob, o)
			add(&eb, e)
		case p.Text != nil:
			add(&ob, *p.Text)
		case p.InlineData != nil:
			add(&ob, "[inline data: "+p.InlineData.MimeType+", "+strconv.Itoa(len(p.InlineData.Data))+" base64 characters]")
		case p.FileData != nil:
			add(&ob, "[file: "+p.FileData.FileURI+"]")
		}
	}
	return ob.String(), eb.String(), nil
}

// responseText reads a function response: Gemini CLI sends
// {"output": text} on success and {"error": text} on failure; anything
// else is kept as its JSON.
func responseText(raw json.RawMessage) (out, errText string) {
	if importer.IsNull(raw) {
		return "", ""
	}
	var r struct {
		Output *string `json:"output"`
		Error  *string `json:"error"`
	}
	if json.Unmarshal(raw, &r) == nil && (r.Output != nil || r.Error != nil) {
		if r.Output != nil {
			out = *r.Output
		}
		if r.Error != nil {
			errText = *r.Error
		}
		return out, errText
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, ""
	}
	return string(bytes.TrimSpace(raw)), ""
}
