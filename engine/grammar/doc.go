// Package grammar is structured output: a JSON Schema compiled into a
// constraint on the model's next token, enforced at sampling time
// (engine.Options.Constraint), so even a model that writes gibberish
// writes a document valid against the schema.
//
// How. The schema becomes a pushdown matcher over bytes (match.go): one
// frame per value being written, anyOf as parallel threads. A Vocab holds
// the model's tokens as bytes in a trie; a step walks the trie with the
// matcher and keeps the tokens whose every byte it accepts, pruning a
// subtree at the first refused byte. Inside a free-form string, tokens of
// plain text are allowed by a precomputed bitset and only the others are
// walked; masks are cached per matcher state. Every byte the matcher
// accepts keeps a valid completion possible, and when the token budget
// (MaxTokens or the context) runs short, only tokens that leave a document
// closable in time are allowed, so the reply ends valid rather than cut.
//
// Supported keywords: type (one or a list), properties, required,
// additionalProperties (false, or a schema for objects without
// properties), items, minItems, maxItems, enum, const, anyOf, oneOf
// (branches must be told apart by type or by a required const/enum
// property), pattern, minLength, maxLength, minimum, maximum. Annotations
// (title, description, default, examples, $schema, $id, $comment,
// deprecated, readOnly, writeOnly) are ignored. Anything else ($ref,
// format, exclusiveMinimum, patternProperties, ...) is refused with an
// error naming it. JSONObject is OpenAI's json_object: any JSON object.
//
// Generation writes a subset of what a schema allows, always valid:
// numbers without exponents (at most 15 integer and 9 decimal digits),
// strings without \u escapes, only the declared properties when there are
// some, no whitespace before the document or after it, at most 32
// whitespace bytes in a row between tokens, values nested at most 48 deep.
//
// Patterns (regex.go lists the subset): ECMAScript syntax on ASCII, with
// classes, groups, alternation and quantifiers, ^ and $ only at the ends;
// pattern cannot be combined with minLength/maxLength (write the length in
// the pattern). Untrusted schemas are bounded: 1 MB, 32 levels, 10,000
// sub-schemas, 64 properties per object, and a work limit on pattern
// automata (fuzzed: FuzzCompile, FuzzPattern).
package grammar
