// How the page writes a number in its words (captions, readings, questions, link notes): JavaScript's own
// toFixed and toPrecision behind a spec shaped like Python's format spec, because that is the shape the callers use.
// Only the specs the project writes are accepted; anything else throws.
//
//   format(0.1234, ".2f")   -> "0.12"       toFixed(2)
//   format(-0.0001, "+.3f") -> "+0.000"     a sign: "+" unless the printed value is below zero
//   format(0.1234, ".1%")   -> "12.3%"      (100 x).toFixed(1), then "%"
//   format(1234.5, ",.0f")  -> "1,235"      commas every three digits of the whole part
//   format(0.28, "g")       -> "0.28"       toPrecision(6) (".3g": toPrecision(3)), trailing zeros dropped
//   plain(0.5) -> "0.5", plain(1) -> "1"    String(x): the shortest digits that read back as x
//
// Where this differs from Python's format(), and why that is fine: nothing compares these words with Python's any
// more (the words are computed only in the page).
// - Ties: toFixed rounds the exact binary value, a tie away from zero (0.125 -> "0.13", 2.5 -> "3"); Python
//   rounds a tie to even ("0.12", "2"). Either is within half a unit of the last digit printed.
// - Exponents: the exponent form comes where JavaScript uses it ("g": below 1e-6 and from 10^precision up;
//   plain(): below 1e-6 and from 1e21 up; "f": from 1e21 up) and is written JavaScript's way: "1e-7",
//   "1.23e+8" (Python's "g" already from 1e-4 down, and "1e-05", "1.23e+08").
// - A value that prints as zero has no minus: "0.00", "+0.000", "0" (Python: "-0.00" for -0.001, and for -0.0).
// - NaN and the infinities print as JavaScript spells them, whatever the spec: "NaN", "Infinity", "-Infinity"
//   ("+Infinity" under "+"); Python writes "nan", "inf". The page's words never show one on purpose.
// - plain() writes an integer without ".0": "1", not Python's repr "1.0".

const SPEC = /^(\+)?(,)?(?:\.(\d+))?([f%g])$/; // [+][,].Nf, [+].N%, [+][.N]g: no more is written

// "2.500" -> "2.5", "1.00e+8" -> "1e+8", "100" -> "100": "g" drops the zeros that end its decimals
function trim(text) {
  const [digits, exponent] = text.split("e");
  const kept = digits.includes(".") ? digits.replace(/0+$/, "").replace(/\.$/, "") : digits;
  return exponent === undefined ? kept : `${kept}e${exponent}`;
}

const group = (text) => text.replace(/^(\d+)/, (whole) => whole.replace(/\B(?=(\d{3})+$)/g, ","));

export function format(x, spec) {
  if (typeof x !== "number") throw new TypeError(`format: not a number: ${x}`);
  const [, plus, comma, digits, type] = SPEC.exec(spec) ?? [];
  if (!type || (type !== "g" && digits === undefined) || (comma && type !== "f")) {
    throw new Error(`format: unsupported spec ${JSON.stringify(spec)}`);
  }
  if (!Number.isFinite(x)) return (plus && x > 0 ? "+" : "") + String(x);
  let body;
  if (type === "g") body = trim(x.toPrecision(digits === undefined ? 6 : Math.max(1, Number(digits))));
  else body = (type === "%" ? 100 * x : x).toFixed(Number(digits));
  if (/^-[0.]*(e|$)/.test(body)) body = body.slice(1); // -0.001 -> "-0.00" -> "0.00"
  const negative = body.startsWith("-");
  if (negative) body = body.slice(1);
  if (comma) body = group(body);
  return (negative ? "-" : plus ? "+" : "") + body + (type === "%" ? "%" : "");
}

// A number as a reader should see it in a sentence or a link, with no chosen precision: String(x), the shortest
// digits that read back as x ("0.1", "1", "0.05", "1e-7"), and -0 as "0".
export function plain(x) {
  if (typeof x !== "number") throw new TypeError(`plain: not a number: ${x}`);
  return String(x);
}
