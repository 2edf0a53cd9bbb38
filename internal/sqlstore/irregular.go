package sqlstore

import (
	"slices"
	"strings"
	"sync"
)

// irregularVerbs are English verbs whose past forms no stemmer folds into
// their base form ("went" is not a form of "go" to Porter's rules), one
// verb a line: base form, past, past participle. A verb whose forms are
// also common nouns or other verbs ("bound", "ground", "lay", "rose") is
// left out: its forms would find what was not meant.
const irregularVerbs = `arise arose arisen
awake awoke awoken
beat beat beaten
become became become
begin began begun
bend bent bent
bite bit bitten
bleed bled bled
blow blew blown
break broke broken
bring brought brought
build built built
buy bought bought
catch caught caught
choose chose chosen
come came come
creep crept crept
deal dealt dealt
dig dug dug
draw drew drawn
drink drank drunk
drive drove driven
eat ate eaten
fall fell fallen
feed fed fed
feel felt felt
fight fought fought
find found found
flee fled fled
fly flew flown
forbid forbade forbidden
forget forgot forgotten
forgive forgave forgiven
freeze froze frozen
get got gotten
give gave given
go went gone
grow grew grown
hang hung hung
hear heard heard
hide hid hidden
hold held held
keep kept kept
kneel knelt knelt
know knew known
lead led led
leave left left
lend lent lent
lose lost lost
make made made
mean meant meant
meet met met
overcome overcame overcome
pay paid paid
ride rode ridden
ring rang rung
run ran run
say said said
see saw seen
seek sought sought
sell sold sold
send sent sent
shake shook shaken
shoot shot shot
show showed shown
shrink shrank shrunk
sing sang sung
sink sank sunk
sit sat sat
sleep slept slept
slide slid slid
speak spoke spoken
spend spent spent
spin spun spun
stand stood stood
steal stole stolen
stick stuck stuck
sting stung stung
strike struck struck
swear swore sworn
sweep swept swept
swim swam swum
swing swung swung
take took taken
teach taught taught
tear tore torn
tell told told
think thought thought
throw threw thrown
understand understood understood
wake woke woken
wear wore worn
weep wept wept
win won won
write wrote written`

// irregular maps each form of an irregular verb to all of its forms,
// built on first use: most processes never expand a search word.
var irregular = sync.OnceValue(func() map[string][]string {
	out := map[string][]string{}
	for line := range strings.SplitSeq(irregularVerbs, "\n") {
		var forms []string
		for _, f := range strings.Fields(line) {
			if !slices.Contains(forms, f) {
				forms = append(forms, f)
			}
		}
		for _, f := range forms {
			out[f] = forms
		}
	}
	return out
})

// IrregularForms returns the other forms of w when it is a form of an
// irregular verb ("went": "go", "gone"), nil otherwise.
func IrregularForms(w string) []string {
	var out []string
	for _, f := range irregular()[strings.ToLower(w)] {
		if f != strings.ToLower(w) {
			out = append(out, f)
		}
	}
	return out
}
