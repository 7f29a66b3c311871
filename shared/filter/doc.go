// Package filter implements the OData $filter language of the Azure Table
// service: a lexer (lexer.go, literal.go), a recursive-descent parser
// (parser.go) producing a small AST (ast.go), an allocation-free evaluator
// over model.Entity (eval.go), and the extraction of PartitionKey and RowKey
// bounds that a store can push down (keyrange.go). It does no I/O.
//
// # Grammar
//
// Whitespace (unicode.IsSpace, like .NET's char.IsWhiteSpace) may appear
// between any two tokens and is only required where two tokens would
// otherwise merge ("Age gt 30" but also "(Age gt 30)and(B eq 1)").
//
//	filter      = [ or-expr ]                   ; empty or blank: matches all
//	or-expr     = and-expr *( "or" and-expr )
//	and-expr    = not-expr *( "and" not-expr )
//	not-expr    = "not" not-expr / comparison
//	comparison  = operand [ compare-op operand ]
//	compare-op  = "eq" / "ne" / "gt" / "ge" / "lt" / "le"
//	operand     = "(" or-expr ")" / literal / property
//	property    = id-start *id-part             ; a C# identifier
//	id-start    = letter / "_" / letter-number  ; Unicode L*, Nl
//	id-part     = id-start / Nd / Mn / Mc / Pc / Cf
//
//	literal     = string / boolean / int32 / int64 / double
//	            / datetime / guid / binary
//	string      = "'" *( any-char-but-quote / "''" ) "'"
//	boolean     = "true" / "false"
//	int32       = [ "-" ] 1*DIGIT                       ; must fit Int32
//	int64       = [ "-" ] 1*DIGIT ( "L" / "l" )
//	double      = [ "-" ] 1*DIGIT [ "." 1*DIGIT ] [ exp ] ( "D" / "d" )
//	            / [ "-" ] 1*DIGIT "." 1*DIGIT [ exp ]
//	            / [ "-" ] 1*DIGIT exp
//	            / "NaN" / "INF" / "-INF"
//	exp         = ( "e" / "E" ) [ "+" / "-" ] 1*DIGIT
//	datetime    = "datetime" "'" date [ "T" time ] [ zone ] "'"
//	date        = 4DIGIT "-" 2DIGIT "-" 2DIGIT
//	time        = 2DIGIT ":" 2DIGIT ":" 2DIGIT [ "." 1*DIGIT ]
//	zone        = "Z" / "z" / ( "+" / "-" ) 2DIGIT ":" 2DIGIT
//	guid        = "guid" "'" 8HEX "-" 4HEX "-" 4HEX "-" 4HEX "-" 12HEX "'"
//	            ; also 32 digits, {...} and (...), as .NET's Guid parser takes
//	binary      = ( "X" / "binary" ) "'" *( 2HEX ) "'"
//
// Beyond the grammar, a comparison must have a property on at least one
// side; the literal may come first ('a' lt PartitionKey), which the parser
// turns around (PartitionKey gt 'a'). A bare property is a Boolean
// predicate: "IsActive" means "IsActive eq true" and "not IsActive" its
// negation, as the Table service documents. As in OData v3, a Boolean
// literal is a condition of its own ("$filter=true" matches everything,
// "false" nothing; the .NET LINQ provider writes "(true and RowKey eq
// '1')"), and a comparison of two literals of one type is decided at parse
// time ("1 eq 1" is true); other literals alone, or two literals of
// different types, are errors. At most 15
// comparisons (MaxComparisons) are allowed per filter, the Table service's
// limit, and nesting is limited to MaxDepth.
//
// # Decisions, and where they come from
//
// The Table service documents that "all parts of the filter string are
// case-sensitive", so the operators, "true" and "false" are lower-case only
// ("EQ" and "AND" are syntax errors) and property names are case-sensitive.
// The literal prefixes (datetime, guid, binary, X) are matched ignoring case,
// as the WCF Data Services lexer the service descends from does: one of
// those names directly followed by a quote cannot mean anything else, while
// any other name stays a name ("A eq'x'" compares A with 'x').
//
// Numbers follow that lexer too: digits alone are Int32 and must fit (no
// silent widening to Int64 or Double; write 3000000000L), L or l makes an
// Int64, and a fraction, an exponent or a D or d suffix makes a Double.
// Decimal (M) and Single (f) literals, null, the DateTimeOffset and Time
// literals, arithmetic and functions are not part of the Table service's
// dialect and are rejected. NaN, INF and -INF are Double literals, so
// properties with those exact names cannot be filtered on.
//
// A datetime literal is parsed like .NET's XmlConvert: a missing zone means
// UTC, an offset is converted to UTC, and fractions beyond 7 digits (100 ns
// ticks) are rounded half to even.
//
// Comparing two properties is rejected ("one side of the expression must
// be a constant": the service cannot compare a property with another). A comparison on a missing property, or on a property whose
// type differs from the literal's, is false, for ne as for every other
// operator; "not" is plain Boolean negation on top of that, so "not (A eq 1)"
// matches entities without A.
//
// OData ranks "not" above the comparison operators, so there "not A eq
// true" reads "(not A) eq true". Here "not" takes the whole comparison
// ("not A eq 1" is "not (A eq 1)"), which keeps every comparison a property
// against a literal. The readings differ only for such unparenthesised
// filters; the SDKs and the documentation always write "not (...)".
//
// A malformed filter is an *Error carrying the byte offset of the problem;
// the service answers it with 400 InvalidInput (see Error.APIError).
package filter
