// Whether a program can be evaluated as it is, without type stripping (a warm in-process strip
// still costs tens of microseconds, most of a small retained evaluation).
//
// Every TypeScript construct that JavaScript does not read the same way needs a `:` (annotations,
// return types, definite assignment, `this` parameters) or a `<` (type parameters and arguments,
// angle-bracket assertions), or is no JavaScript at all (`as`, `satisfies`, `!` after an
// expression, optional `?` parameters and members, modifiers, overloads without body, `type`,
// `interface`, `enum`, `namespace`, `declare`...). So text without `:` and `<` that JavaScript
// accepts means the same stripped or not. The caller decides "JavaScript accepts" with the parser
// it uses anyway (V8's compile or acorn) and strips as before whenever that parser refuses, so
// every refused program still gets the type stripper's diagnostics. (The host sends a retained
// run's program through its type stripper on a wider scan, plugin/base/type_marks.h, so an owner
// rarely strips at all.)
export function mayRunUnstripped(source) {
  return !source.includes(':') && !source.includes('<');
}
