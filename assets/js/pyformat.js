// Python's number formatting in JavaScript: what an f-string prints, so that a caption computed in the page is
// the same text as the one sim/views computes in Python (tests/test_js_twins.py checks it on edge cases and on
// random settings).
//
//   format(0.125, ".2f")   -> "0.12"      (Python rounds the exact binary value half to even; toFixed goes up)
//   format(0.1234, ".1%")  -> "12.3%"     (x * 100 in floating point, then "f")
//   format(1e-5, "g")      -> "1e-05"     (six significant digits, trailing zeros dropped, two-digit exponent)
//   format(1234.5, ",.0f") -> "1,234"
//   repr(0.1) -> "0.1", repr(2) -> "2.0": str() of a Python float; String(n) for a Python int
//
// The spec is the part of a Python format spec this project uses: [+][,][.precision][f|%|g|e]. A number that is
// negative or -0.0 keeps its sign ("-0.00"), as Python's does, and "+" writes the sign of the others ("+0.083");
// nan and inf print as Python prints them.

// |x| (finite, >= 0) with `frac` decimals, rounded half to even on its exact value. toFixed rounds the exact
// value too, but a tie goes to the larger digit; a tie is possible only when |x| * 2^(frac+1) is an odd integer.
function fixed(ax, frac) {
  if (ax >= 1e21) return BigInt(ax).toString() + (frac ? "." + "0".repeat(frac) : ""); // an integer already
  const s = ax.toFixed(frac);
  const twice = ax * 2 ** (frac + 1);
  if (Number.isInteger(twice) && twice % 2 === 1 && Number(s[s.length - 1]) % 2 === 1) {
    const exact = ax.toFixed(frac + 1); // exact: |x| has frac + 1 decimals, the last one a 5
    return frac ? exact.slice(0, -1) : exact.slice(0, -2);
  }
  return s;
}

// (digits, exponent) of |x| rounded half to even to p significant digits: digits is a string of p digits,
// |x| ~ 0.d1d2... * 10^(exponent + 1), i.e. d1.d2... * 10^exponent.
function significant(ax, p) {
  if (ax === 0) return ["0".repeat(p), 0];
  // the exponent of the exact value: 21 significant digits cannot round a double up to the next power of ten
  let e = Number(ax.toExponential(20).split("e")[1]);
  const frac = p - 1 - e;
  let digits;
  if (frac > 100) {
    digits = ax.toExponential(p - 1).split("e")[0].replace(".", ""); // below 1e-90: no ties to break
  } else if (frac >= 0) {
    digits = fixed(ax, frac).replace(".", "").replace(/^0+/, "");
  } else {
    const whole = Math.floor(ax);
    const big = BigInt(whole);
    const q = 10n ** BigInt(-frac);
    let n = big / q;
    const r2 = 2n * (big % q);
    if (r2 > q || (r2 === q && (whole !== ax || n % 2n === 1n))) n += 1n;
    digits = n.toString();
  }
  if (digits.length > p) {
    // rounding carried into a new decade (9.9999995 -> 10.000000)
    digits = digits.slice(0, p);
    e += 1;
  }
  return [digits.padEnd(p, "0"), e];
}

// "2.500" -> "2.5", "2." -> "2": what "g" does with the digits it printed
const trim = (s) => s.replace(/0+$/, "").replace(/\.$/, "");

function group(intPart) {
  return intPart.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

function special(x) {
  if (Number.isNaN(x)) return "nan";
  return x > 0 ? "inf" : "-inf";
}

function twoDigitExp(e) {
  return (e < 0 ? "-" : "+") + String(Math.abs(e)).padStart(2, "0");
}

const SPEC = /^(\+)?(,)?(?:\.(\d+))?([fge%])?$/;

export function format(x, spec = "") {
  if (typeof x !== "number") throw new TypeError(`format: not a number: ${x}`);
  if (spec === "") return repr(x);
  const m = SPEC.exec(spec);
  if (!m) throw new Error(`format: unsupported spec ${JSON.stringify(spec)}`);
  const [, plus, comma, precText, type = "g"] = m;
  if (!m[4] && precText === undefined) return (plus && !(x < 0 || Object.is(x, -0)) ? "+" : "") + repr(x);
  let prec = precText === undefined ? 6 : Number(precText);
  if (type === "%") x *= 100;
  const sign = x < 0 || Object.is(x, -0) ? "-" : plus && !Number.isNaN(x) ? "+" : "";
  if (!Number.isFinite(x)) return (Number.isNaN(x) && plus ? "+" : sign === "+" ? "+" : "") + special(x) + (type === "%" ? "%" : "");
  const ax = Math.abs(x);
  let body;
  if (type === "f" || type === "%") {
    body = fixed(ax, prec);
  } else if (type === "e") {
    const [d, e] = significant(ax, prec + 1);
    body = d[0] + (prec ? "." + d.slice(1) : "") + "e" + twoDigitExp(e);
  } else {
    // "g": fixed when -4 <= exponent < precision, else scientific; trailing zeros dropped
    if (prec === 0) prec = 1;
    const [d, e] = significant(ax, prec);
    if (e >= -4 && e < prec) {
      body = e >= 0 ? d.slice(0, e + 1) + "." + d.slice(e + 1) : "0." + "0".repeat(-e - 1) + d;
      body = trim(body);
    } else {
      const mant = trim(d[0] + "." + d.slice(1));
      body = mant + "e" + twoDigitExp(e);
    }
  }
  if (comma) {
    const [i, f] = body.split(".");
    body = group(i) + (f === undefined ? "" : "." + f);
  }
  return sign + body + (type === "%" ? "%" : "");
}

// str(x) of a Python float: the shortest digits that round-trip (as String(x)), written Python's way: fixed
// from 1e-4 up to 1e16 with at least one decimal ("2.0"), scientific otherwise ("1e-05", "1.5e+16").
export function repr(x) {
  if (!Number.isFinite(x)) return special(x);
  const sign = x < 0 || Object.is(x, -0) ? "-" : "";
  const [mant, expText] = Math.abs(x).toExponential().split("e");
  const e = Number(expText);
  const d = mant.replace(".", "");
  if (x !== 0 && (e < -4 || e >= 16)) return sign + (d.length > 1 ? d[0] + "." + d.slice(1) : d) + "e" + twoDigitExp(e);
  if (e < 0) return sign + "0." + "0".repeat(-e - 1) + d;
  const intPart = d.slice(0, e + 1).padEnd(e + 1, "0");
  const frac = d.slice(e + 1);
  return sign + intPart + "." + (frac || "0");
}
