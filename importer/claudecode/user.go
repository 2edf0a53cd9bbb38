package claudecode

import (
	"regexp"
	"strings"
	"sync"

	"github.com/loomhq/loom"
)

// user makes the messages of a user line: what the user typed is a user
// message; what Claude Code put there (isMeta lines, system reminders,
// command output, caveats, interruption markers, task notifications) is a
// system message. A line holding both gives a system message
// (<uuid>/context) before the user message (<uuid>).
func (b *builder) user(r *record) []*loom.Message {
	if r.stringContent || len(r.blocks) == 1 {
		if cmd, ok := command(r.blocks[0].Text); ok && r.blocks[0].Type == "text" && !r.IsMeta {
			b.commands[r.id] = markCommand
			if sentToModel(r.blocks[0].Text) {
				b.commands[r.id] = markPrompt
			}
			return []*loom.Message{{
				ID: r.id, Role: loom.RoleUser, CreatedAt: r.ts,
				Parts: []loom.Part{{ID: partID(r, 0), Type: loom.PartText, Text: cmd}},
			}}
		}
	}
	var typed, injected []loom.Part
	for i, bl := range r.blocks {
		id := partID(r, i)
		var p loom.Part
		switch bl.Type {
		case "text":
			if strings.TrimSpace(bl.Text) == "" {
				b.res.Skip("text:blank")
				continue
			}
			p = loom.Part{ID: id, Type: loom.PartText, Text: bl.Text}
			if injectedText := isInjected(bl.Text); r.IsMeta || injectedText {
				if r.IsMeta && !injectedText {
					b.commands[r.id] = markExpansion
				}
				injected = append(injected, p)
				continue
			}
		case "image", "document":
			var ok bool
			if p, ok = filePart(id, bl); !ok {
				b.res.Skip(bl.Type + ":empty")
				continue
			}
			if r.IsMeta {
				injected = append(injected, p)
				continue
			}
		default:
			if !isResultBlock(bl) {
				b.res.Skip("unknown:block:" + label(bl.Type))
			}
			continue
		}
		typed = append(typed, p)
	}
	var out []*loom.Message
	if len(injected) > 0 {
		id := r.id
		if len(typed) > 0 {
			id += "/context"
		}
		out = append(out, &loom.Message{ID: id, Role: loom.RoleSystem, CreatedAt: r.ts, Parts: injected})
	}
	if len(typed) > 0 {
		out = append(out, &loom.Message{ID: r.id, Role: loom.RoleUser, CreatedAt: r.ts, Parts: typed})
	}
	return out
}

// Marks of builder.commands.
const (
	markCommand   byte = 'c'
	markExpansion byte = 'e'
	// markPrompt is a command whose wrapper says it runs (sentToModel).
	markPrompt byte = 'p'
)

// settleCommands gives each slash-command message of msgs its role: the
// user's when it was sent to the model (a custom command, /init, /review
// …: an expansion of it or a reply follows before the next prompt),
// system when it only ran in Claude Code (/model, /mcp, /clear …), so that
// a local command is never taken for the last prompt. Claude Code writes
// a command's expansion right after the command; a reading that ends
// at the command, before its expansion, takes it for the user's when
// its wrapper says it runs (sentToModel), as the whole file's reading
// will.
func settleCommands(msgs []*loom.Message, marks map[string]byte) {
	answered := false
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		switch mark := marks[m.ID]; {
		case mark == markCommand || mark == markPrompt:
			if answered || (mark == markPrompt && i == len(msgs)-1) {
				m.Role = loom.RoleUser
			} else {
				m.Role = loom.RoleSystem
			}
			answered = false
		case mark == markExpansion || m.Role == loom.RoleAssistant:
			answered = true
		case m.Role == loom.RoleUser:
			answered = false
		}
	}
}

var (
	commandName    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?s)<command-name>(.*?)</command-name>`) })
	commandMessage = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?s)<command-message>(.*?)</command-message>`)
	})
	commandArgs = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?s)<command-args>(.*?)</command-args>`) })
)

// sentToModel reports whether a slash command's wrapper says the command
// runs as a prompt: Claude Code gives a command sent to the model its
// progress message ("orchestrator is running…", "init is analyzing your
// codebase…") in <command-message>, a local one (/model, /mcp) its bare
// name.
func sentToModel(text string) bool {
	msg := commandMessage().FindStringSubmatch(text)
	name := commandName().FindStringSubmatch(text)
	if msg == nil || name == nil {
		return false
	}
	m, n := strings.TrimSpace(msg[1]), strings.TrimPrefix(strings.TrimSpace(name[1]), "/")
	return m != "" && m != n
}

// command reads a slash command's wrapper as what the user typed:
// "/name args".
func command(text string) (string, bool) {
	if !strings.Contains(text, "<command-name>") {
		return "", false
	}
	name := commandName().FindStringSubmatch(text)
	if name == nil {
		return "", false
	}
	cmd := strings.TrimSpace(name[1])
	if cmd != "" && !strings.HasPrefix(cmd, "/") {
		cmd = "/" + cmd
	}
	if args := commandArgs().FindStringSubmatch(text); args != nil {
		if a := strings.TrimSpace(args[1]); a != "" {
			cmd += " " + a
		}
	}
	if cmd == "" {
		return "", false
	}
	return cmd, true
}

// injectedPrefixes open text that Claude Code, an IDE or a hook put into
// a user line; the user did not type it.
var injectedPrefixes = []string{
	"<system-reminder>",
	"<local-command-stdout>",
	"<local-command-stderr>",
	"<local-command-caveat>",
	"Caveat: The messages below were generated by the user while running local commands",
	"<command-message>",
	"<task-notification>",
	"<ide_opened_file>",
	"<ide_selection>",
	"<ide_diagnostics>",
	"<user-prompt-submit-hook>",
	"<bash-stdout>",
	"<bash-stderr>",
	"[Request interrupted by user",
}

func isInjected(text string) bool {
	t := strings.TrimLeft(text, " \t\r\n")
	for _, p := range injectedPrefixes {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}
