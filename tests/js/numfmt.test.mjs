// assets/js/numfmt.js under node (`node --test tests/js/`): how the page's words write a number. Each spec the
// project writes, on real values; then properties on random values: a printed number is within half a unit of its
// last digit, "g" keeps its significant digits, commas only regroup, "%" is 100 x, and no zero has a minus.
import assert from "node:assert/strict";
import { test } from "node:test";
import { format, plain } from "../../assets/js/numfmt.js";

// a seeded generator (mulberry32), so a failure names a value that comes back on the next run
function generator(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

// random values over many sizes, both signs: |x| from 1e-9 to 1e9
function values(seed, n) {
  const rand = generator(seed);
  return Array.from({ length: n }, () => (rand() < 0.5 ? -1 : 1) * rand() * 10 ** Math.floor(rand() * 19 - 9));
}

test("each spec the project writes, on the values its captions show", () => {
  const cases = [
    [0.6534, ".2f", "0.65"], [0.05, ".2f", "0.05"], [0.20000000000000004, ".2f", "0.20"], [1.25, ".3f", "1.250"],
    [-0.0625, "+.4f", "-0.0625"], [0.0833333, "+.3f", "+0.083"], [1, "+.0f", "+1"], [-1, "+.0f", "-1"],
    [0.3369, ".1%", "33.7%"], [0.96, ".0%", "96%"], [0.0123, ".2%", "1.23%"], [1, ".0%", "100%"],
    [1234.5, ",.0f", "1,235"], [480, ",.0f", "480"], [1234567.891, ",.0f", "1,234,568"],
    [0.2, "g", "0.2"], [0.28, "g", "0.28"], [5, "g", "5"], [12, "g", "12"], [0.1234567, "g", "0.123457"],
    [3, "+g", "+3"], [-5, "+g", "-5"], [0, "+g", "+0"],
    [0.0157, ".4g", "0.0157"], [116, ".4g", "116"], [33.7, ".4g", "33.7"], [100, ".3g", "100"],
    [1e7, ".3g", "1e+7"], [6.37e8, ".3g", "6.37e+8"], [1e308, ".3g", "1e+308"], [0.34, ".6g", "0.34"],
    [42.0, ".1f", "42.0"], [1.5, ".0f", "2"], [64, ".0f", "64"],
  ]; // prettier-ignore
  for (const [x, spec, want] of cases) assert.equal(format(x, spec), want, `format(${x}, "${spec}")`);
});

test("negative numbers keep their minus, and a number that prints as zero has none", () => {
  assert.equal(format(-3.14159, ".2f"), "-3.14");
  assert.equal(format(-0.25, ".1%"), "-25.0%");
  assert.equal(format(-1234567.5, ",.1f"), "-1,234,567.5");
  assert.equal(format(-0.5, "g"), "-0.5");
  for (const [x, spec, want] of [[-0, ".2f", "0.00"], [-0.001, ".2f", "0.00"], [-0.0001, "+.3f", "+0.000"],
    [-0.00001, ".1%", "0.0%"], [-0, "g", "0"], [-0, "+g", "+0"], [-0.4, ".0f", "0"], [-0.4, ",.0f", "0"]]) { // prettier-ignore
    assert.equal(format(x, spec), want, `format(${x}, "${spec}")`);
  }
});

test("a tie rounds as toFixed does, away from zero (Python's format rounds it to even)", () => {
  assert.equal(format(0.125, ".2f"), "0.13"); // exactly 1/8: Python writes 0.12
  assert.equal(format(2.5, ".0f"), "3");
  assert.equal(format(-3.25, ".1f"), "-3.3");
  assert.equal(format(0.375, ".1%"), "37.5%");
  assert.equal(format(1.005, ".2f"), "1.00"); // not a tie: 1.005 is 1.00499999999999989... in binary
});

test("a fixed number is within half a unit of its last digit, with exactly that many decimals", () => {
  const rand = generator(11);
  for (const x of values(1, 2000)) {
    const d = Math.floor(rand() * 7);
    const text = format(x, `.${d}f`);
    const tiny = 4 * Number.EPSILON * Math.abs(x);
    assert.ok(Math.abs(Number.parseFloat(text) - x) <= 0.5 * 10 ** -d + tiny, `format(${x}, ".${d}f") = ${text}`);
    assert.equal(text.split(".")[1]?.length ?? 0, d, text);
    assert.match(text, /^-?\d+(\.\d+)?$/, text);
  }
});

test("g keeps its significant digits: within half a unit of the last of them, trailing zeros dropped", () => {
  const rand = generator(12);
  for (const x of values(2, 2000)) {
    const p = 1 + Math.floor(rand() * 6);
    const text = format(x, `.${p}g`);
    const [digits] = text.replace("-", "").split("e");
    const significant = digits.replace(".", "").replace(/^0+/, "");
    assert.ok(significant.length <= p, `format(${x}, ".${p}g") = ${text}`);
    assert.ok(!/\.\d*0$|\.$/.test(digits), `trailing zeros in ${text}`);
    const unit = 10 ** (Math.floor(Math.log10(Math.abs(x))) - p + 1); // the last significant digit's place
    const tiny = 4 * Number.EPSILON * Math.abs(x);
    assert.ok(Math.abs(Number.parseFloat(text) - x) <= 0.5 * unit * (1 + 1e-9) + tiny, `format(${x}, ".${p}g") = ${text}`);
  }
  assert.equal(format(123456789, "g"), "1.23457e+8"); // from 10^6 on, "g" (6 digits) takes the exponent form
  assert.equal(format(0.00001234, ".3g"), "0.0000123"); // down to 1e-6 it stays fixed
  assert.equal(format(1.5e-7, "g"), "1.5e-7");
});

test("commas only regroup the whole part; percent is a hundred times; + only adds a sign", () => {
  const rand = generator(13);
  for (const x of values(3, 1000)) {
    const d = Math.floor(rand() * 4);
    const grouped = format(x, `,.${d}f`);
    assert.match(grouped, /^-?\d{1,3}(,\d{3})*(\.\d+)?$/, grouped);
    assert.equal(grouped.replace(/,/g, ""), format(x, `.${d}f`));
    assert.equal(format(x, `.${d}%`), `${format(100 * x, `.${d}f`)}%`);
    const plainText = format(x, `.${d}f`);
    const signed = format(x, `+.${d}f`);
    assert.equal(signed, plainText.startsWith("-") ? plainText : `+${plainText}`);
  }
  assert.equal(format(1e9, ",.0f"), "1,000,000,000");
  assert.equal(format(999, ",.2f"), "999.00");
  assert.equal(format(1000, ",.0f"), "1,000");
});

test("large and tiny numbers", () => {
  assert.equal(format(1e20, ".0f"), "100000000000000000000");
  assert.equal(format(1e21, ".2f"), "1e+21"); // toFixed's own exponent form from 1e21 up
  assert.equal(format(1e-9, ".3f"), "0.000");
  assert.equal(format(5e-324, ".2f"), "0.00");
  assert.equal(format(1e-300, ".4g"), "1e-300");
  assert.equal(format(1.7976931348623157e308, ".3g"), "1.8e+308");
});

test("NaN and the infinities print as JavaScript spells them", () => {
  assert.equal(format(NaN, ".2f"), "NaN");
  assert.equal(format(NaN, "+.1%"), "NaN");
  assert.equal(format(Infinity, ".1%"), "Infinity");
  assert.equal(format(Infinity, "+g"), "+Infinity");
  assert.equal(format(-Infinity, ",.0f"), "-Infinity");
});

test("a spec the project does not write, or a value that is not a number, is refused", () => {
  for (const spec of ["", ".2", "f", "%", ",g", ",.1%", ".2e", "d", "5.2f", ">8.2f", ".2F", undefined]) {
    assert.throws(() => format(1.5, spec), /unsupported spec/, String(spec));
  }
  assert.throws(() => format("0.5", ".2f"), TypeError);
  assert.throws(() => format(1n, ".2f"), TypeError);
});

test("plain writes the shortest digits that read back, an integer without a decimal point", () => {
  const cases = [[0.5, "0.5"], [0.1, "0.1"], [1, "1"], [2.0, "2"], [0.05, "0.05"], [-0, "0"], [-2.5, "-2.5"],
    [0.1 + 0.2, "0.30000000000000004"], [1e-7, "1e-7"], [1e21, "1e+21"]]; // prettier-ignore
  for (const [x, want] of cases) assert.equal(plain(x), want);
  for (const x of values(4, 500)) assert.equal(Number(plain(x)), x);
  assert.throws(() => plain("1"), TypeError);
});
