package lambdafn

import "unicode/utf8"

// Lambda's limit on a synchronous response: "6 MB" on the Lambda quotas
// page, enforced on the serialized response as 6,291,556 bytes
// (Function.ResponseSizeTooLarge, "Response payload size exceeded maximum
// allowed payload size (6291556 bytes)"). The response is the proxy
// envelope Invoke returns, with the body as a JSON string in it.
//
// answerBudget is what a query answer's body may cost in that envelope
// (httpapi.Options.AnswerBudget, counted by envelopeCost): 5 MiB, leaving
// more than 1 MiB for the status and headers, which are a few KB
// (continuation tokens are at most about 2.8 KB each, and the request line
// and headers the answer could echo are bounded by API Gateway's 10 KB).
// Below the decimal reading, 6,000,000, as well.
const answerBudget = 5 << 20

// envelopeCost is how many bytes b takes inside a JSON string of the proxy
// response, as encoding/json writes it (Invoke uses json.Marshal, which
// escapes HTML): a quote or backslash takes 2, \n \r \t \b \f take 2, other
// control characters, <, > and & take 6 (\u003c), U+2028 and U+2029 take 6
// instead of 3, and a byte of invalid UTF-8 becomes \ufffd, 6. serveHTTP
// base64-encodes a body that is not valid UTF-8, but httpapi's JSON
// answers always are (edm writes \ufffd for invalid input), so their cost
// is the escaped length. An answer of quotes-heavy JSON costs about 15% more
// than its length; one full of <, > or & up to six times.
func envelopeCost(b []byte) int {
	n := 0
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == '\f':
				n += 2
			case c < 0x20 || c == '<' || c == '>' || c == '&':
				n += 6
			default:
				n++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			n += 6
		case r == '\u2028' || r == '\u2029':
			n += 6
		default:
			n += size
		}
		i += size
	}
	return n
}
