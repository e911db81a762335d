// Unit tests of assets/js/engine.js alone (node --test tests/js/). Its equality with sim/ is tests/test_engine_js.py's.
import assert from "node:assert/strict";
import { test } from "node:test";
import * as engine from "../../assets/js/engine.js";

// Random123's known-answer vectors for Philox4x32-10 (its tests/kat_vectors): counter, key -> the four words.
const KNOWN_ANSWERS = [
  [[0, 0, 0, 0], [0, 0], [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]],
  [[0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff], [0xffffffff, 0xffffffff],
    [0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd]],
  [[0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344], [0xa4093822, 0x299f31d0],
    [0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1]],
];

test("Philox4x32-10 gives Random123's known answers", () => {
  for (const [counter, key, words] of KNOWN_ANSWERS) {
    assert.deepEqual([...engine.philox(...counter, ...key)], words);
  }
});

test("uniforms take 53 bits of two words and lie in [0, 1)", () => {
  assert.equal(engine.uniform(0xffffffff, 0xffffffff), 1 - 2 ** -53);
  assert.equal(engine.uniform(0, 0), 0);
  assert.equal(engine.uniform(1 << 5, 1 << 6), (2 ** 26 + 1) * 2 ** -53);
  const u = engine.streamUniforms(3, 4, 5, 6, 7, 9);
  const w = engine.philox(4, 5, 6, 7, 3, 4); // uniform 8 is block 4, words 0 and 1
  assert.equal(u[8], engine.uniform(w[0], w[1]));
});

test("a seed is a Number, a BigInt or a decimal string, keyed with all 64 bits", () => {
  assert.deepEqual(engine.keyWords(7), [7, 0]);
  assert.deepEqual(engine.keyWords(2n ** 63n - 1n, 1), [0, 2 ** 31]);
  assert.deepEqual(engine.keyWords("9223372036854775807"), [0xffffffff, 0x7fffffff]);
  const a = engine.runToy({ seed: "9223372036854775806", n_seeds: 2, iterations: 5 });
  const b = engine.runToy({ seed: 2n ** 63n - 1n, iterations: 5 });
  assert.deepEqual(a.counts.data.slice(24, 48), b.counts.data.slice(0, 24)); // seed 1 of the band = the next seed
  assert.throws(() => engine.toyConfig({ seed: 2 ** 60 }), /BigInt or a decimal string/);
});

test("seed 7 of a band from seed 0 is the 1-seed run with seed 7, and a run's prefix does not depend on T", () => {
  const band = engine.runToy({ n_seeds: 16, iterations: 30 });
  const alone = engine.runToy({ seed: 7, iterations: 30 });
  for (let t = 0; t < 30; t++) {
    for (let j = 0; j < 24; j++) assert.equal(engine.at(band.counts, t, 7, j), engine.at(alone.counts, t, 0, j));
  }
  assert.equal(engine.at(band.w, 30, 7), engine.at(alone.w, 30, 0));
  const short = engine.runToy({ seed: 7, iterations: 10 });
  assert.deepEqual(short.u.data, alone.u.data.slice(0, short.u.data.length));
});

test("the binomial inverse CDF is min{k : U < F(k)}, also where (1 - p)^G underflows", () => {
  for (const [G, z] of [[8, -1.3], [8, 2.0], [64, 0.4], [1024, 0.2], [1024, 3.0], [1024, -6.0], [2, 40.0]]) {
    const p = 1 / (1 + Math.exp(-z)), lp_c = Math.log(p), lp_w = lp_c - z;
    const log_choose = [];
    const pmf = new Float64Array(G + 1);
    let lf = 0;
    const lfs = [0];
    for (let i = 1; i <= G; i++) lfs.push((lf += Math.log(i)));
    for (let k = 0; k <= G; k++) log_choose.push(lfs[G] - lfs[k] - lfs[G - k]);
    for (let k = 0; k <= G; k++) pmf[k] = Math.exp(log_choose[k] + k * lp_c + (G - k) * lp_w);
    for (const U of [1e-9, 0.001, 0.1, 0.37, 0.5, 0.83, 0.999]) { // (none within rounding of an F)
      let k = 0, F = pmf[0];
      while (U >= F && k < G) F += pmf[++k];
      assert.equal(engine.binomialInverse(U, G, p), k, `G ${G} z ${z} U ${U}`);
    }
  }
  assert.equal(engine.binomialInverse(0.5, 8, 0), 0); // p = 0
  assert.equal(engine.binomialInverse(0.5, 8, 1), 8); // p = 1
  assert.equal(engine.binomialInverse(1 - 2 ** -53, 1024, 1e-300), 0); // (1 - p)^G = 1 to double precision
});

test("the advantage table is the chapter's: rewards 1, 0, 0, 1 give +-1 (eps 0) and +-0.866 with the sample std", () => {
  const t = engine.advantageTable(4, { eps: 0 });
  assert.equal(t.A_correct[2], 1);
  assert.equal(t.A_wrong[2], -1);
  assert.ok(Math.abs(engine.advantageTable(4, { ddof: 1, eps: 0 }).A_correct[2] - 0.5 / Math.sqrt(1 / 3)) < 1e-15);
  const flat = engine.advantageTable(8);
  assert.equal(flat.A_correct[8], 0); // an all-correct group teaches nothing
  assert.equal(flat.A_wrong[0], 0);
  assert.equal(engine.advantageTable(8, { baseline: "none", scale: "none" }).A_correct[8], 1); // REINFORCE keeps it
  for (let k = 1; k < 8; k++) { // mean baseline: a group's advantages sum to 0
    assert.ok(Math.abs(k * flat.A_correct[k] + (8 - k) * flat.A_wrong[k]) < 1e-12);
  }
  assert.throws(() => engine.advantageTable(8, { scale: "batch" }), /batch couples groups/);
});

test("an invalid config is refused before anything runs, naming the setting and what it accepts", () => {
  const cases = [
    [{ group_size: 1 }, "group_size must be an integer in [2, 1024], got 1"],
    [{ group_size: 2.5 }, "group_size must be an integer in [2, 1024], got 2.5"],
    [{ group_size: "8" }, 'group_size must be an integer in [2, 1024], got "8"'],
    [{ lr: -1 }, "lr must be a number in [0, 1000], got -1"],
    [{ lr: NaN }, "lr must be a number in [0, 1000], got NaN"],
    [{ lr: true }, "lr must be a number in [0, 1000], got true"],
    [{ eps: 1e-9 - 1 }, "eps must be a number in [0, 1], got -0.999999999"],
    [{ beta: -1e-5 }, "beta must be a number in [0, 100], got -0.00001"],
    [{ beta: -0 }, null], // -0 is in [0, 100]
    [{ clip_eps: 0 }, "clip_eps must be a number in (0, 1], got 0"],
    [{ scale: "std" }, 'scale must be one of group, batch, none, got "std"'],
    [{ ddof: true }, "ddof must be one of 0, 1, got true"],
    [{ dynamic_sampling: "yes" }, 'dynamic_sampling must be true or false, got "yes"'],
    [{ dynamic_sampling: 1 }, "dynamic_sampling must be true or false, got 1"],
    [{ scale: null }, "scale must be one of group, batch, none, got null"],
    [{ seed: -1 }, "seed must be an integer in [0, 2**63-1], got -1"],
    [{ seed: "9223372036854775808" }, 'seed must be an integer in [0, 2**63-1], got "9223372036854775808"'],
    [{ n_prompts: 2, difficulties: [1, 60] }, "difficulties must be numbers, each number in [-50, 50], got 60 at [1]"],
    [{ difficulties: "1,2" }, 'difficulties must be numbers, each number in [-50, 50], got "1,2"'],
    [{ difficulties: [1, 2] }, "difficulties must have n_prompts = 24 values, got 2"],
    [{ scale: "x".repeat(60) }, `scale must be one of group, batch, none, got "${"x".repeat(38)}…`],
    [{ scale: "a\u202eb" }, 'scale must be one of group, batch, none, got "a\\u202eb"'],
    [{ iterations: 5000, n_seeds: 1024 }, "this run needs about 2,950 MB of memory (3 arrays of (iterations + 1) x " +
      "seeds x prompts = 5001 x 1024 x 24 numbers); the cap is 480 MB: use fewer iterations, seeds or prompts"],
  ];
  for (const [config, message] of cases) {
    if (message === null) assert.doesNotThrow(() => engine.toyConfig(config));
    else assert.throws(() => engine.runToy(config), { message });
  }
  assert.throws(() => engine.runToy({ groupsize: 8 }), { message: 'ToyConfig has no setting "groupsize"' });
  assert.throws(() => engine.runSharpen({ G: 8 }), { message: 'SharpenConfig has no setting "G"' });
  assert.equal(engine.toyConfig({ n_prompts: 2, difficulties: new Float64Array([1, 2]) }).n_prompts, 2);
  assert.throws(() => engine.runSharpen({ init_probs: [0.5, 0.5] }),
    { message: "init_probs must have one entry per strategy (3), got 2 numbers" });
  assert.throws(() => engine.runSharpen({ success: [[1, 0]], init_probs: 0.5 }),
    { message: "init_probs must have one entry per strategy (2), got 0.5" });
  assert.throws(() => engine.runSharpen({ success: [[1]] }),
    { message: "success must be a (problems, strategies) table with >= 2 strategies, got 1 x 1" });
});

test("every declared setting's refusal says what its declaration accepts", () => {
  const builds = { ToyConfig: engine.toyConfig, SharpenConfig: engine.sharpenConfig };
  let checked = 0;
  for (const [what, build] of Object.entries(builds)) {
    for (const spec of engine.DECLARATIONS[what].filter((f) => f.kind !== undefined)) {
      const bad = spec.kind === "numbers" ? [1e9] : "no such value";
      const says = (e) => e.message.startsWith(`${spec.name} must be ${spec.describe}, got `);
      assert.throws(() => build({ [spec.name]: bad }), says, `${what}.${spec.name}`);
      checked++;
    }
  }
  assert.ok(checked >= 30, checked);
});

test("a diverging run says where and what to lower", () => {
  assert.throws(() => engine.expectedRun({ lr: 1000, beta: 100, iterations: 50 }),
    { message: "the run diverged at iteration 3 (logits not finite): lower lr, lr_w or beta" });
});

test("a run records ToyHistory's arrays in Python's shapes, finite, with the chapter's start", () => {
  const h = engine.runToy({ iterations: 7, n_seeds: 3, n_prompts: 5, beta: 0.1 });
  assert.deepEqual(h.p.shape, [8, 3, 5]);
  assert.deepEqual(h.counts.shape, [7, 3, 5]);
  assert.deepEqual(Object.keys(h.metrics), engine.STEP_METRICS);
  for (const x of [h.p, h.u, h.w, h.accuracy, h.kl_exact, h.entropy, ...Object.values(h.metrics)]) {
    assert.ok(x.data.every(Number.isFinite));
  }
  assert.equal(engine.at(h.answers, 7, 2), 7 * 5 * 8);
  const chapter = engine.runToy({ iterations: 1 });
  assert.ok(Math.abs(engine.at(chapter.accuracy, 0, 0) - 0.245) < 0.005); // mean_j sigmoid(-d_j), d from -2 to 7
  const e = engine.expectedRun({ iterations: 200 });
  assert.ok(engine.at(e.accuracy, 200, 0) > 0.9);
});

test("the sharpening toy sharpens: pass@1 up, pass@64 down, the curves cross", () => {
  const h = engine.runSharpen({});
  assert.deepEqual(h.probs.shape, [101, 3]);
  assert.ok(Math.abs(h.pass_at_1.data[0] - 0.325) < 1e-12);
  assert.ok(h.pass_at_1.data[100] > 0.42 && h.pass_at_k.data[100] < h.pass_at_k.data[0] - 0.05);
  assert.ok(h.crossover_k > 1 && h.crossover_k < 64);
  // the chapter's two problems: (0.6, 0.05) -> (0.98, 0.01) cross between k = 2 and 3
  const ks = Array.from({ length: 64 }, (_, i) => i + 1);
  const k = engine.crossoverK(ks, engine.meanPassAtKKnownP([0.98, 0.01], ks), engine.meanPassAtKKnownP([0.6, 0.05], ks));
  assert.ok(k > 2 && k < 3);
});

test("Std scaling: the first step without std is 0.43 of the step with it, matched at lr 0.47", () => {
  const with_std = { group_size: 8, lr: 0.2, seed: 0, n_seeds: engine.STD_SEEDS }; // the page's run with std
  const ratio = engine.firstStepSize({ ...with_std, scale: "none" }) / engine.firstStepSize(with_std);
  assert.ok(Math.abs(ratio - 0.168 / 0.394) < 0.005);
  assert.ok(Math.abs(engine.matchedLr(with_std, "none") - 0.47) < 0.005);
  assert.ok(Math.abs(engine.meanAbsAdvantage(8)[1] - 0.66) < 0.005); // Exercise 15.4: 1 of 8 correct
});
