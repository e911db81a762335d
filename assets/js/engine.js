// engine.js: the chapter's toy simulations in the browser, the same runs as sim/ (docs/browser-engine.md).
//
// A plain ES module: no DOM, no dependency, nothing but `export` before top-level declarations (so a page
// opened from file:// can load it as a classic script: sim/engine_js.classic_script). It is the second path of
// sim/toy, sim/sharpen.py and sim/views/std_scaling.py, with their names and formulas, one function each:
//
//     runToy(config)           sim.toy.run_toy: S seeds of the 24-prompt toy, sampled
//     expectedRun(config)      sim.toy.expected_run: the exact average run (its "slots" form)
//     runSharpen(config)       sim.sharpen.train (method "counts"): the sharpening toy of the pass@k debate
//     stdComparison(config)    sim.exercises.std_comparison: Exercise 15.4's two comparisons
//
// Same seed, same run: every draw comes from Philox4x32-10 at the counter sim/rng.py assigns it, and each
// sampled count is the same inverse CDF of that uniform, so counts and answers equal sim's exactly and every
// real number agrees to rounding (tests/test_engine_js.py runs both on hundreds of configs).
//
// Shapes use sim/'s letters: S seeds, P prompts, G group size, T iterations, K strategies, I iterations of the
// sharpening toy. A result array is {shape, data}: data a Float64Array in row-major (numpy's C) order, so
// run.p is indexed [t][s][j] as in Python: at(run.p, t, s, j). Plain objects and typed arrays survive
// postMessage, so a Worker can run the engine and hand the result to the page.
//
// Read it in this order: validation (in the declarations' words), the random generator, the binomial inverse CDF, the
// advantage table, the toy's model and its update (count_update), the two runs, the sharpening toy, Std scaling.

// ---- declarations: written by `python -m sim.engine_js` from sim/ (do not edit by hand) ----
export const DECLARATIONS = {
  "ToyConfig": [
    {"name": "n_prompts", "default": 24, "kind": "number", "help": "number of prompts P in the pool", "optional": false, "describe": "an integer in [1, 256]", "lo": 1, "hi": 256, "integer": true, "low_open": false, "step": null},
    {"name": "d_min", "default": -2.0, "kind": "number", "help": "difficulty of the easiest (leftmost) prompt", "optional": false, "describe": "a number in [-50, 50]", "lo": -50.0, "hi": 50.0, "integer": false, "low_open": false, "step": 0.5},
    {"name": "d_max", "default": 7.0, "kind": "number", "help": "difficulty of the hardest prompt; d_j spread linearly d_min..d_max", "optional": false, "describe": "a number in [-50, 50]", "lo": -50.0, "hi": 50.0, "integer": false, "low_open": false, "step": 0.5},
    {"name": "difficulties", "default": null, "kind": "numbers", "help": "explicit difficulties d_j, one per prompt, overriding d_min/d_max", "optional": true, "describe": "numbers, each number in [-50, 50]", "lo": -50.0, "hi": 50.0, "integer": false, "low_open": false, "step": null},
    {"name": "u_init", "default": 0.0, "kind": "number", "help": "initial per-prompt parameter u_j (the same for every j)", "optional": false, "describe": "a number in [-50, 50]", "lo": -50.0, "hi": 50.0, "integer": false, "low_open": false, "step": null},
    {"name": "w_init", "default": 0.0, "kind": "number", "help": "initial shared skill w", "optional": false, "describe": "a number in [-50, 50]", "lo": -50.0, "hi": 50.0, "integer": false, "low_open": false, "step": null},
    {"name": "group_size", "default": 8, "kind": "number", "help": "answers G sampled per prompt (TRL's num_generations)", "optional": false, "describe": "an integer in [2, 1024]", "lo": 2, "hi": 1024, "integer": true, "low_open": false, "step": 1},
    {"name": "lr", "default": 0.2, "kind": "number", "help": "step size on the per-prompt parameters u", "optional": false, "describe": "a number in [0, 1000]", "lo": 0.0, "hi": 1000.0, "integer": false, "low_open": false, "step": 0.05},
    {"name": "lr_w", "default": null, "kind": "number", "help": "step size on the shared skill w (none: the same as lr; 0 switches the shared skill off)", "optional": true, "describe": "a number in [0, 1000]", "lo": 0.0, "hi": 1000.0, "integer": false, "low_open": false, "step": 0.05},
    {"name": "beta", "default": 0.0, "kind": "number", "help": "weight of the k3 KL penalty to the reference (TRL's default 0; DeepSeekMath 0.04)", "optional": false, "describe": "a number in [0, 100]", "lo": 0.0, "hi": 100.0, "integer": false, "low_open": false, "step": null},
    {"name": "scale", "default": "group", "kind": "choice", "help": "advantage divisor", "optional": false, "describe": "one of group, batch, none", "choices": ["group", "batch", "none"], "labels": {"group": "group std (GRPO)", "batch": "batch std (TRL option)", "none": "none (Dr. GRPO)"}},
    {"name": "baseline", "default": "mean", "kind": "choice", "help": "advantage baseline", "optional": false, "describe": "one of mean, loo, none", "choices": ["mean", "loo", "none"], "labels": {"mean": "group mean (GRPO)", "loo": "leave-one-out (RLOO)", "none": "none (REINFORCE)"}},
    {"name": "ddof", "default": 0, "kind": "choice", "help": "std convention", "optional": false, "describe": "one of 0, 1", "choices": [0, 1], "labels": {"0": "population (chapter)", "1": "sample (TRL)"}},
    {"name": "eps", "default": 0.0001, "kind": "number", "help": "added to the std before dividing (0 gives the chapter's exact +-1)", "optional": false, "describe": "a number in [0, 1]", "lo": 0.0, "hi": 1.0, "integer": false, "low_open": false, "step": null},
    {"name": "mu", "default": 1, "kind": "number", "help": "inner gradient steps per batch (GRPO's mu, TRL's num_iterations); > 1 makes the clip matter", "optional": false, "describe": "an integer in [1, 64]", "lo": 1, "hi": 64, "integer": true, "low_open": false, "step": 1},
    {"name": "clip_eps", "default": 0.2, "kind": "number", "help": "PPO clip range below 1, and above unless clip_eps_high is set (TRL's epsilon)", "optional": false, "describe": "a number in (0, 1]", "lo": 0.0, "hi": 1.0, "integer": false, "low_open": true, "step": 0.05},
    {"name": "clip_eps_high", "default": null, "kind": "number", "help": "clip range above 1 (none: clip_eps; DAPO's clip-higher 0.28); for cispo the cap on the weight itself (ScaleRL: 5) (TRL's epsilon_high)", "optional": true, "describe": "a number in (0, 10]", "lo": 0.0, "hi": 10.0, "integer": false, "low_open": true, "step": 0.01},
    {"name": "loss_type", "default": "grpo", "kind": "choice", "help": "loss: aggregation and objective (grpo is the chapter's; TRL's default is dapo)", "optional": false, "describe": "one of grpo, cispo", "choices": ["grpo", "cispo"], "labels": {"grpo": "grpo (per response)", "cispo": "cispo (clipped weight, MiniMax-M1)"}},
    {"name": "dynamic_sampling", "default": false, "kind": "flag", "help": "DAPO dynamic sampling: drop all-equal groups, draw more to refill", "optional": false, "describe": "true or false"},
    {"name": "max_redraws", "default": 8, "kind": "number", "help": "refill rounds per iteration under dynamic sampling", "optional": false, "describe": "an integer in [0, 64]", "lo": 0, "hi": 64, "integer": true, "low_open": false, "step": null},
    {"name": "iterations", "default": 200, "kind": "number", "help": "training iterations T", "optional": false, "describe": "an integer in [1, 5000]", "lo": 1, "hi": 5000, "integer": true, "low_open": false, "step": 10},
    {"name": "seed", "default": 0, "kind": "number", "help": "seed of the random generator", "optional": false, "describe": "an integer in [0, 2**63-1]", "lo": 0, "hi": "9223372036854775807", "integer": true, "low_open": false, "step": 1},
    {"name": "n_seeds", "default": 1, "kind": "number", "help": "independent runs S simulated at once", "optional": false, "describe": "an integer in [1, 1024]", "lo": 1, "hi": 1024, "integer": true, "low_open": false, "step": 1},
  ],
  "SharpenConfig": [
    {"name": "success", "default": [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]},
    {"name": "init_probs", "default": [0.6, 0.35, 0.05]},
    {"name": "group_size", "default": 8, "kind": "number", "help": "answers G sampled per prompt (TRL's num_generations)", "optional": false, "describe": "an integer in [2, 1024]", "lo": 2, "hi": 1024, "integer": true, "low_open": false, "step": 1},
    {"name": "groups_per_problem", "default": 4, "kind": "number", "help": "groups of each problem per iteration (a batch of P x this groups)", "optional": false, "describe": "an integer in [1, 1024]", "lo": 1, "hi": 1024, "integer": true, "low_open": false, "step": null},
    {"name": "iterations", "default": 100, "kind": "number", "help": "GRPO updates of the shared logits", "optional": false, "describe": "an integer in [0, 100000]", "lo": 0, "hi": 100000, "integer": true, "low_open": false, "step": 10},
    {"name": "lr", "default": 0.5, "kind": "number", "help": "plain gradient step on the logits: theta -= lr * grad", "optional": false, "describe": "a number in [0, 10]", "lo": 0.0, "hi": 10.0, "integer": false, "low_open": false, "step": 0.05},
    {"name": "scale", "default": "group", "kind": "choice", "help": "advantage divisor", "optional": false, "describe": "one of group, none", "choices": ["group", "none"], "labels": {"group": "group std (GRPO)", "none": "none (Dr. GRPO)"}},
    {"name": "ddof", "default": 0, "kind": "choice", "help": "std convention", "optional": false, "describe": "one of 0, 1", "choices": [0, 1], "labels": {"0": "population (chapter)", "1": "sample (TRL)"}},
    {"name": "eps", "default": 0.0001, "kind": "number", "help": "added to the std before dividing (0 gives the chapter's exact +-1)", "optional": false, "describe": "a number in [0, 1]", "lo": 0.0, "hi": 1.0, "integer": false, "low_open": false, "step": null},
    {"name": "k_eval", "default": 64, "kind": "number", "help": "the \"large k\" tracked in the history as pass@k_eval", "optional": false, "describe": "an integer in [1, 100000]", "lo": 1, "hi": 100000, "integer": true, "low_open": false, "step": null},
    {"name": "seed", "default": 0, "kind": "number", "help": "seeds the portable generator (sim/rng.py) that samples strategies and rewards", "optional": false, "describe": "an integer in [0, 2**63-1]", "lo": 0, "hi": "9223372036854775807", "integer": true, "low_open": false, "step": 1},
  ],
  "toy": {
    "TOY_LOSS_TYPES": ["grpo", "cispo"],
    "MAX_PROMPTS": 256,
    "MAX_GROUP_SIZE": 1024,
    "MAX_ITERATIONS": 5000,
    "MAX_SEEDS": 1024,
    "HISTORY_ARRAYS": 3,
    "MAX_MEMORY_MB": 480.0,
    "STEP_METRICS": ["kl", "loss", "grad_norm", "clip_ratio/region_mean", "mean_abs_adv", "n_groups", "reward", "frac_reward_zero_std", "frac_all_correct", "frac_all_wrong", "expected_zero_frac"],
    "UPDATE_METRICS": ["kl", "loss", "grad_norm", "clip_ratio/region_mean", "mean_abs_adv", "n_groups"],
    "STATE_METRICS": ["accuracy", "kl_exact", "entropy", "no_signal"],
  },
  "std_scaling": {
    "STD_SEEDS": 16,
    "HARD": 0.1,
  },
  "passk": {
    "KS": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64],
  },
  "refusals": {
    "difficulties_count": "difficulties must have n_prompts = {n_prompts} values, got {got}",
    "memory": "this run needs about {mb} MB of memory ({arrays} arrays of (iterations + 1) x seeds x prompts = {rows} x {seeds} x {prompts} numbers); the cap is {cap} MB: use fewer iterations, seeds or prompts",
    "diverged": "the run diverged at iteration {t} (logits not finite): lower lr, lr_w or beta",
    "table_by_count": "scale must be group or none for a table by count (batch couples groups), got {scale}",
    "table_scale": "a custom advantage table needs scale group or none (the batch std is not a table)",
    "table_size": "the advantage table needs G + 1 = {entries} entries per column",
    "table_finite": "the advantage table holds NaN or infinite values",
    "success_shape": "success must be a (problems, strategies) table with >= 2 strategies, got {shape}",
    "success_range": "success must hold probabilities in [0, 1]",
    "init_count": "init_probs must have one entry per strategy ({strategies}), got {shape}",
    "init_sum": "init_probs must be positive and sum to 1 (a softmax never reaches 0)",
    "philox_key": "a Philox key is a 64-bit integer in [0, 2**64-1], got {key}",
  },
};
// ---- end of declarations ----

const TOY = DECLARATIONS.toy;
export const STEP_METRICS = TOY.STEP_METRICS; // sim.toy.history.STEP_METRICS: TRL's names where TRL has one
export const MAX_MEMORY_MB = TOY.MAX_MEMORY_MB;
export const STD_SEEDS = DECLARATIONS.std_scaling.STD_SEEDS;
export const HARD = DECLARATIONS.std_scaling.HARD;

// ================================================================ arrays

function ndarray(shape) {
  let n = 1;
  for (const size of shape) n *= size;
  return { shape, data: new Float64Array(n) };
}

// The element [i0][i1]... of a result array: at(run.p, t, s, j).
export function at(x, ...index) {
  let flat = 0;
  for (let a = 0; a < x.shape.length; a++) flat = flat * x.shape[a] + index[a];
  return x.data[flat];
}

// ================================================================ validation, in the declarations' words
//
// Every refused setting reads "NAME must be DESCRIBE, got VALUE": DESCRIBE is the declaration's own account of
// what it accepts (sim.settings.Setting.describe, carried in DECLARATIONS), VALUE the refused value as JavaScript
// writes it. The engine refuses what sim refuses (tests/fixtures/engine_jobs.py checks the same field is named);
// each language words its messages its own way.

// A refused value for a message: as JavaScript writes it, invisible characters escaped, cut to 40 characters.
function shown(value) {
  let text;
  if (typeof value === "string") text = JSON.stringify(value);
  else if (typeof value === "number") text = Object.is(value, -0) ? "-0" : String(value);
  else if (Array.isArray(value) || ArrayBuffer.isView(value)) text = `[${Array.from(value, shown).join(", ")}]`;
  else if (value !== null && typeof value === "object") text = "an object";
  else text = String(value); // bigint, boolean, null, undefined
  text = text.replace(/[\u0000-\u001f\u007f-\u009f\u00ad\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g,
    (ch) => "\\u" + ch.charCodeAt(0).toString(16).padStart(4, "0"));
  return text.length <= 40 ? text : text.slice(0, 39) + "…";
}

function refuse(spec, value, where = "") {
  return new Error(`${spec.name} must be ${spec.describe}, got ${shown(value)}${where}`);
}

// A seed (or another integer past 2**53): a safe-integer Number, a BigInt or a decimal string, as a BigInt;
// null if it is none of these.
function bigInteger(value) {
  if (typeof value === "bigint") return value;
  if (typeof value === "number" && Number.isSafeInteger(value)) return BigInt(value);
  if (typeof value === "string" && /^[0-9]+$/.test(value)) return BigInt(value);
  return null;
}

// Whether `value` is a number the declaration accepts: an integer (Number, or BigInt / decimal string where the
// range passes 2**53, as for the seeds) or a finite number, in [lo, hi] or (lo, hi].
function acceptsNumber(spec, value) {
  if (typeof spec.hi === "string" || typeof spec.lo === "string") {
    const x = bigInteger(value);
    if (x === null && typeof value === "number" && Number.isInteger(value)) {
      throw new Error(`${spec.name} must be ${spec.describe}: pass ${value} as a BigInt or a decimal string`);
    }
    return x !== null && x >= BigInt(spec.lo) && x <= BigInt(spec.hi);
  }
  if (typeof value !== "number" || !(spec.integer ? Number.isInteger(value) : Number.isFinite(value))) return false;
  return spec.lo <= value && value <= spec.hi && !(spec.low_open && value === spec.lo);
}

// The checked value of one setting (sim.settings.Setting.check): throws naming the field and what it accepts.
function checkSetting(spec, value) {
  if (value === null) {
    if (!spec.optional) throw refuse(spec, value);
    return value;
  }
  if (spec.kind === "flag") {
    if (typeof value !== "boolean") throw refuse(spec, value);
  } else if (spec.kind === "choice") {
    if (!spec.choices.includes(value)) throw refuse(spec, value);
  } else if (spec.kind === "numbers") {
    if (!Array.isArray(value) && !ArrayBuffer.isView(value)) throw refuse(spec, value);
    Array.from(value).forEach((x, i) => {
      if (!acceptsNumber(spec, x)) throw refuse(spec, x, ` at [${i}]`);
    });
  } else if (!acceptsNumber(spec, value)) {
    throw refuse(spec, value);
  }
  return value;
}

// An unknown key is refused (sim's dataclass would not take it either).
function checkKeys(fields, values, what) {
  const known = new Set(fields.map((f) => f.name));
  for (const key of Object.keys(values ?? {})) {
    if (!known.has(key)) throw new Error(`${what} has no setting ${shown(key)}`);
  }
}

// A config keyed by the dataclass's field names, missing keys at their defaults, every field checked in field
// order (sim.settings.validate).
function buildConfig(fields, values, what) {
  checkKeys(fields, values, what);
  const cfg = {};
  for (const f of fields) cfg[f.name] = values?.[f.name] === undefined ? f.default : values[f.name];
  for (const f of fields) if (f.kind !== undefined) cfg[f.name] = checkSetting(f, cfg[f.name]);
  return cfg;
}

// A config of another engine (assets/js/tinylm_grpo.js) checked as buildConfig checks the toy's: `fields` its
// declarations (as DECLARATIONS holds them), `what` the dataclass's name for an unknown key's message.
export function checkedConfig(fields, values, what) {
  return buildConfig(fields, values, what);
}

// The Error for sim.refusals.REFUSALS[key] (carried in DECLARATIONS), its {placeholders} filled from `values`.
function refused(key, values = {}) {
  return new Error(DECLARATIONS.refusals[key].replace(/\{(\w+)\}/g, (_, name) => String(values[name])));
}

// 2950 -> "2,950"
const thousands = (x) => String(Math.round(x)).replace(/\B(?=(\d{3})+(?!\d))/g, ",");

// sim.toy.model.memory_mb: the memory a run's history holds, HISTORY_ARRAYS float64 arrays of (T+1, S, P).
export function memoryMb(cfg) {
  return TOY.HISTORY_ARRAYS * 8 * (cfg.iterations + 1) * cfg.n_seeds * cfg.n_prompts / 1e6;
}

// sim.toy.ToyConfig: the complete, checked config of a toy run. Throws, naming the setting, for an invalid value, a
// wrong number of difficulties or a run over the memory cap (before anything is allocated). The seed stays as
// given (a Number, a BigInt or a decimal string).
export function toyConfig(values = {}) {
  const cfg = buildConfig(DECLARATIONS.ToyConfig, values, "ToyConfig");
  if (cfg.difficulties !== null && cfg.difficulties.length !== cfg.n_prompts) {
    throw refused("difficulties_count", { n_prompts: cfg.n_prompts, got: cfg.difficulties.length });
  }
  const mb = memoryMb(cfg);
  if (mb > TOY.MAX_MEMORY_MB) {
    throw refused("memory", { mb: thousands(mb), arrays: TOY.HISTORY_ARRAYS, rows: cfg.iterations + 1,
      seeds: cfg.n_seeds, prompts: cfg.n_prompts, cap: thousands(TOY.MAX_MEMORY_MB) });
  }
  return cfg;
}

// A table's shape for a refusal: "3 numbers", "2 x 3" (sim.refusals.shape_text).
const shapeText = (shape) => (shape.length === 1 ? `${shape[0]} numbers` : shape.join(" x "));

// The shape numpy gives a nested list of numbers (null if ragged or not numbers).
function tableShape(x) {
  if (!Array.isArray(x)) return null;
  if (x.every((v) => typeof v === "number")) return [x.length];
  if (!x.every((row) => Array.isArray(row) && row.every((v) => typeof v === "number"))) return null;
  if (x.length && !x.every((row) => row.length === x[0].length)) return null;
  return [x.length, x.length ? x[0].length : 0];
}

// sim.sharpen.SharpenConfig: the complete, checked config of a sharpening run.
export function sharpenConfig(values = {}) {
  const fields = DECLARATIONS.SharpenConfig;
  checkKeys(fields, values, "SharpenConfig");
  const cfg = {};
  for (const f of fields) cfg[f.name] = values?.[f.name] === undefined ? f.default : values[f.name];
  const shape = tableShape(cfg.success);
  if (shape === null) throw new Error("success must be a (problems, strategies) table of numbers");
  if (shape.length !== 2 || shape[0] < 1 || shape[1] < 2) {
    throw refused("success_shape", { shape: shapeText(shape) });
  }
  if (!cfg.success.every((row) => row.every((v) => v >= 0 && v <= 1))) {
    throw refused("success_range");
  }
  const pi = tableShape(cfg.init_probs);
  if (pi === null || pi.length !== 1 || pi[0] !== shape[1]) {
    throw refused("init_count", { strategies: shape[1], shape: pi === null ? shown(cfg.init_probs) : shapeText(pi) });
  }
  let total = 0;
  for (const x of cfg.init_probs) total += x;
  if (!cfg.init_probs.every((x) => x > 0) || !(Math.abs(total - 1) <= 1e-6)) {
    throw refused("init_sum");
  }
  return buildConfig(fields, cfg, "SharpenConfig");
}

// ================================================================ the portable random generator (sim/rng.py)

const M0 = 0xd2511f53, M1 = 0xcd9e8d57; // Philox4x32's multipliers
const W0 = 0x9e3779b9, W1 = 0xbb67ae85; // its Weyl constants
const TOY_STREAM = 0, SHARPEN_STREAM = 1; // c3 of each simulation's streams

// hi(a b): the upper 32 bits of the exact 64-bit product of two 32-bit words, a b = high 2^16 + low with both
// parts below 2^48 (exact in a double).
function mulhi(a, b) {
  const low = a * (b & 0xffff);
  const high = a * (b >>> 16);
  return Math.floor((high + Math.floor(low / 65536)) / 65536);
}

// Philox4x32-10: the four output words of counter (c0, c1, c2, c3) under key (k0, k1), into out. Ten rounds of
//   (c0, c1, c2, c3) <- (hi(M1 c2) ^ c1 ^ k0, lo(M1 c2), hi(M0 c0) ^ c3 ^ k1, lo(M0 c0)),  (k0, k1) += (W0, W1)
export function philox(c0, c1, c2, c3, k0, k1, out = new Uint32Array(4)) {
  for (let r = 0; r < 10; r++) {
    const hi0 = mulhi(M0, c0), lo0 = Math.imul(M0, c0) >>> 0;
    const hi1 = mulhi(M1, c2), lo1 = Math.imul(M1, c2) >>> 0;
    c0 = (hi1 ^ c1 ^ k0) >>> 0;
    c1 = lo1;
    c2 = (hi0 ^ c3 ^ k1) >>> 0;
    c3 = lo0;
    k0 = (k0 + W0) >>> 0;
    k1 = (k1 + W1) >>> 0;
  }
  out[0] = c0;
  out[1] = c1;
  out[2] = c2;
  out[3] = c3;
  return out;
}

// U = ((a >> 5) 2^26 + (b >> 6)) / 2^53: a uniform in [0, 1) with 53 random bits from two words.
export function uniform(a, b) {
  return ((a >>> 5) * 67108864 + (b >>> 6)) * 1.1102230246251565e-16;
}

// (k0, k1): the low and high 32-bit words of the 64-bit key seed + offset.
export function keyWords(seed, offset = 0) {
  const base = bigInteger(seed);
  if (base === null) throw new Error(`a seed is a safe integer, a BigInt or a decimal string, got ${shown(seed)}`);
  const key = base + BigInt(offset);
  if (key < 0n || key >= 1n << 64n) throw refused("philox_key", { key });
  return [Number(key & 0xffffffffn), Number(key >> 32n)];
}

// Uniforms 0..n-1 of the stream (key, c1, c2, c3) into out: uniform i from block c0 = i >> 1, words 2(i & 1)
// and 2(i & 1) + 1 (sim.rng.stream_uniforms).
export function streamUniforms(k0, k1, c1, c2, c3, n, out = new Float64Array(n), words = new Uint32Array(4)) {
  for (let block = 0; 2 * block < n; block++) {
    philox(block, c1, c2, c3, k0, k1, words);
    out[2 * block] = uniform(words[0], words[1]);
    if (2 * block + 1 < n) out[2 * block + 1] = uniform(words[2], words[3]);
  }
  return out;
}

// ================================================================ the binomial (sim/toy/binomial.py)

const LOG_TINY = -700; // exp of less is near the subnormal range: the inverse CDF's walk starts above it

// log n!, as scipy.special.gammaln(n + 1): the log of the product below 30, Stirling's series from there on.
function logFactorial(n) {
  if (n < 30) {
    let f = 1;
    for (let i = 2; i <= n; i++) f *= i;
    return Math.log(f);
  }
  const x = n + 1, x2 = x * x; // log Gamma(x) = (x - 1/2) log x - x + log(2 pi) / 2 + 1/(12x) - 1/(360x^3) + ...
  const series = (1 / 12 - (1 / 360 - (1 / 1260 - 1 / (1680 * x2)) / x2) / x2) / x;
  return (x - 0.5) * Math.log(x) - x + 0.9189385332046728 + series;
}

// (G+1,) log C(G, k) for k = 0..G.
export function logChoose(G) {
  const out = new Float64Array(G + 1);
  const lfG = logFactorial(G);
  for (let k = 0; k <= G; k++) out[k] = lfG - logFactorial(k) - logFactorial(G - k);
  return out;
}

// sim.toy.binomial.binomial_pmf: C(G, k) p^k (1 - p)^(G - k) for k = 0..G, into out (G+1,).
export function binomialPmf(p, G, out = new Float64Array(G + 1), log_choose = logChoose(G)) {
  const lp = Math.log(p), lq = Math.log1p(-p);
  for (let k = 0; k <= G; k++) {
    out[k] = Math.exp(log_choose[k] + (k === 0 ? 0 : k * lp) + (k === G ? 0 : (G - k) * lq));
  }
  return out;
}

// sim.toy.runs.expected_pmf: the same from log p and log(1 - p) of policy(z), which keep a rare answer's chance
// where p rounds to 1.
function expectedPmf(lp_c, lp_w, log_choose, out, at = 0) {
  const G = log_choose.length - 1;
  for (let k = 0; k <= G; k++) out[at + k] = Math.exp(log_choose[k] + k * lp_c + (G - k) * lp_w);
  return out;
}

// The inverse CDF k = min{k : U < F(k; p)} of Binomial(G, p), F(k; p) = sum_{i <= k} C(G, i) p^i (1 - p)^(G-i):
// sim.toy.binomial.BinomialSampler's draw for the same U (they differ only where U is within rounding of an F).
// From policy(z): p = p_c, 1 - p = p_w and their logs. The walk adds the terms f(k + 1) = f(k) (G - k) / (k + 1)
// p / (1 - p) from the first that does not underflow (the terms rise up to the mode floor((G + 1) p)).
function inverseCdf(U, G, p_c, p_w, lp_c, lp_w, log_choose) {
  if (p_c === 0) return 0;
  if (p_w === 0) return G;
  let k = 0, log_f = G * lp_w; // log f(0) = G log(1 - p)
  if (log_f < LOG_TINY) { // (1 - p)^G underflows: the first k at or below the mode whose term does not
    let lo = 0, hi = Math.min(G, Math.floor((G + 1) * p_c));
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (log_choose[mid] + mid * lp_c + (G - mid) * lp_w < LOG_TINY) lo = mid + 1;
      else hi = mid;
    }
    k = lo;
    log_f = log_choose[k] + k * lp_c + (G - k) * lp_w;
  }
  const ratio = p_c / p_w;
  let f = k === 0 ? intPower(p_w, G) : Math.exp(log_f), F = f; // f(0) = (1 - p)^G by squaring, else from its log
  while (U >= F && k < G) {
    f *= ratio * (G - k) / (k + 1);
    k++;
    F += f;
  }
  return k;
}

// The same inverse CDF for a probability p in [0, 1] (the engine's loops call inverseCdf with policy()'s logs).
export function binomialInverse(U, G, p, log_choose = logChoose(G)) {
  return inverseCdf(U, G, p, 1 - p, Math.log(p), Math.log1p(-p), log_choose);
}

// ================================================================ advantages (sim/grpo.py)

// sim.grpo.advantage_table: the advantage of a correct and of a wrong answer in a group of 0/1 rewards with
// k = 0..G correct, by group_advantages on the rewards "k ones, then zeros":
//   A_i = (r_i - b_i) / (s + eps),  b the group mean (mean), the others' mean (loo) or 0 (none), s the group's
//   std with ddof (scale "group") or 1 and no eps (scale "none"). A flat group (k = 0 or G) gets 0 under the
//   mean and loo baselines; under none it keeps its reward, undivided. An entry with no such answer is 0.
export function advantageTable(G, { baseline = "mean", scale = "group", ddof = 0, eps = 1e-4 } = {}) {
  if (scale !== "group" && scale !== "none") {
    throw refused("table_by_count", { scale: shown(scale) });
  }
  const A_correct = new Float64Array(G + 1), A_wrong = new Float64Array(G + 1);
  for (let k = 0; k <= G; k++) {
    const flat = k === 0 || k === G;
    const mean = k / G;
    let a_c = 1, a_w = 0; // baseline "none": the rewards themselves
    if (baseline === "mean") {
      a_c = 1 - mean;
      a_w = 0 - mean;
    } else if (baseline === "loo") {
      a_c = 1 - (k - 1) / (G - 1);
      a_w = 0 - k / (G - 1);
    }
    if (scale === "group") {
      // std of k ones and G - k zeros: sqrt(sum (r - mean)^2 / (G - ddof))
      let std = G > ddof ? Math.sqrt((k * (1 - mean) ** 2 + (G - k) * mean ** 2) / (G - ddof)) : 0;
      if (baseline === "none" && flat) std = 1 - eps; // a flat group stays unscaled
      a_c /= std + eps;
      a_w /= std + eps;
    }
    if (baseline !== "none" && flat) a_c = a_w = 0;
    A_correct[k] = k > 0 ? a_c : 0;
    A_wrong[k] = k < G ? a_w : 0;
  }
  return { A_correct, A_wrong };
}

// The toy's table (sim.toy.update.advantage_table): scale "batch" tabulates the unscaled advantages, which
// countUpdate divides by the batch std.
function toyTable(cfg) {
  const scale = cfg.scale === "batch" ? "none" : cfg.scale;
  return advantageTable(cfg.group_size, { baseline: cfg.baseline, scale, ddof: cfg.ddof, eps: cfg.eps });
}

// run_toy's advantage_table argument: (A_correct, A_wrong) over k = 0..G, checked as sim.toy.runs.check_table.
function checkTable(cfg, table) {
  if (cfg.scale === "batch") {
    throw refused("table_scale");
  }
  const A_correct = Float64Array.from(table.A_correct ?? table[0]);
  const A_wrong = Float64Array.from(table.A_wrong ?? table[1]);
  const G = cfg.group_size;
  if (A_correct.length !== G + 1 || A_wrong.length !== G + 1) {
    throw refused("table_size", { entries: G + 1 });
  }
  if (![...A_correct, ...A_wrong].every(Number.isFinite)) {
    throw refused("table_finite");
  }
  return { A_correct, A_wrong };
}

// ================================================================ the toy's model (sim/toy/model.py)

// (P,) d_j: the explicit difficulties, or d_min..d_max spaced linearly (numpy.linspace).
function makeDifficulties(cfg) {
  if (cfg.difficulties !== null) return Float64Array.from(cfg.difficulties);
  const P = cfg.n_prompts, d = new Float64Array(P);
  const step = P > 1 ? (cfg.d_max - cfg.d_min) / (P - 1) : 0;
  for (let j = 0; j < P; j++) d[j] = cfg.d_min + j * step;
  if (P > 1) d[P - 1] = cfg.d_max;
  return d;
}

// policy(z): pi(correct) = sigmoid(z), pi(wrong) and their logs, into pol at index i;
// log sigmoid(-z) = log sigmoid(z) - z, and log sigmoid(z) ~ z where sigmoid(z) underflows.
function policy(z, pol, i) {
  const p_c = 1 / (1 + Math.exp(-z));
  const lp_c = p_c > 0 ? Math.log(p_c) : z;
  const lp_w = lp_c - z;
  pol.p_c[i] = p_c;
  pol.p_w[i] = Math.exp(lp_w);
  pol.lp_c[i] = lp_c;
  pol.lp_w[i] = lp_w;
}

function policyArrays(n) {
  return { p_c: new Float64Array(n), p_w: new Float64Array(n), lp_c: new Float64Array(n), lp_w: new Float64Array(n) };
}

// x^n for an integer n >= 1 by repeated squaring (sim.toy.model._int_power).
function intPower(x, n) {
  let out = null;
  for (;;) {
    if (n & 1) out = out === null ? x : out * x;
    n >>= 1;
    if (!n) return out;
    x = x * x;
  }
}

// The state metrics of one seed's state (sim.toy.history.state_metrics), means over the P prompts:
// accuracy mean_j p_j, KL(pi || pi_ref) = p log(p / p_ref) + (1 - p) log((1 - p) / (1 - p_ref)),
// entropy -p log p - (1 - p) log(1 - p), no_signal p^G + (1 - p)^G (the chance a group teaches nothing).
function stateMetrics(pol, ref, P, G, out, i) {
  let acc = 0, kl_c = 0, kl_w = 0, h_c = 0, h_w = 0, none = 0;
  for (let j = 0; j < P; j++) {
    acc += pol.p_c[j];
    kl_c += pol.p_c[j] * (pol.lp_c[j] - ref.lp_c[j]);
    kl_w += pol.p_w[j] * (pol.lp_w[j] - ref.lp_w[j]);
    h_c += pol.p_c[j] * pol.lp_c[j];
    h_w += pol.p_w[j] * pol.lp_w[j];
    none += intPower(pol.p_c[j], G) + intPower(pol.p_w[j], G);
  }
  out.accuracy.data[i] = acc / P;
  out.kl_exact.data[i] = (kl_c + kl_w) / P;
  out.entropy.data[i] = -(h_c + h_w) / P;
  out.no_signal[i] = none / P;
}

// ================================================================ one update (sim/toy/update.py)

// surrogate_grad: d objective / d log pi of one answer with advantage a at ratio rho = pi / pi_old, before the
// KL term, into out[0], and whether the clip touches it, out[1] (0/1).
//   grpo (PPO's clip): rho a inside the clip range, 0 where the clip bites (rho > 1 + eps_high with a > 0,
//        rho < 1 - eps with a < 0); on-policy (the first inner step, rho = 1) it never does: a.
//   cispo: min(rho, eps_max) a, every answer keeps a gradient; counted where rho > eps_max with a > 0.
function surrogateGrad(a, rho, first, cfg, eps_high, out) {
  if (cfg.loss_type === "cispo") {
    out[0] = Math.min(rho, eps_high) * a;
    out[1] = rho > eps_high && a > 0 ? 1 : 0;
  } else if (first) {
    out[0] = a;
    out[1] = 0;
  } else {
    const clipped = (rho > 1 + eps_high && a > 0) || (rho < 1 - cfg.clip_eps && a < 0);
    out[0] = clipped ? 0 : rho * a;
    out[1] = clipped ? 1 : 0;
  }
}

// k3 = u - log u - 1, u = pi_ref / pi: Schulman's estimator of KL(pi || pi_ref) for one sampled answer
// (sim.grpo.k3_kl), from the probabilities and their logs; >= 0, and d k3 / d log pi = 1 - u.
function k3(p_ref, p, lp_ref, lp) {
  return p_ref / p - (lp_ref - lp) - 1;
}

// logit_grad: the toy's step rule, dL/dz of one slot with n_c correct and n_w wrong answers whose objective
// gradients (surrogateGrad, less beta (1 - u) for the k3 term) sum to ns_c and ns_w:
//   dL/dz = -(1/B) [ns_c sigmoid(-z) - ns_w sigmoid(z)],   sigmoid(-z) = pi(wrong), sigmoid(z) = pi(correct)
function logitGrad(ns_c, ns_w, p_c, p_w, neg_inv_B) {
  return (ns_c * p_w - ns_w * p_c) * neg_inv_B;
}

// Scratch arrays of an update over at most N slots of P prompts: allocated once per run.
function updateWork(N, P) {
  const f = () => new Float64Array(N), g = () => new Float64Array(P);
  return { prompt: new Int32Array(N), k: new Int32Array(N), weight: f(), n_c: f(), n_w: f(), a_c: f(), a_w: f(),
    dz: f(), pol: policyArrays(P), old_c: g(), old_w: g(), rho_c: g(), rho_w: g(), du: g(), s: new Float64Array(2) };
}

// count_update: mu GRPO steps on one seed's (w, u) from counts alone. Slot n = 0..N-1 of the batch holds a
// group of G answers to prompt work.prompt[n], work.k[n] of them correct, counted work.weight[n] times. With
// z = w + u_j - d_j, rho = pi / pi_old, u = pi_ref / pi and B = G sum(weight) answers, GRPO's loss is
//   L = -(1/B) sum_slots weight [k (s_c - beta k3_c) + (G - k)(s_w - beta k3_w)]
// and its gradient in z (logitGrad) sums into dL/du_j over the slots of prompt j and into dL/dw over all.
// Then u -= lr dL/du, w -= lr_w dL/dw, mu times with pi_old fixed at the sampling state.
// u[base..base+P): the seed's parameters, updated in place; returns the new w. now: policy(z) at (w, u) if the
// caller has it. m: the step's metrics, into row i (TRL's names: loss, grad_norm, kl of the first inner step;
// clip_ratio/region_mean over the inner steps). The policy and the ratios are per prompt, shared by its slots.
function countUpdate(w, u, base, N, identity, run, work, m, i, now = null) {
  const { cfg, G, P, d, ref, table } = run;
  const { prompt, k, weight, n_c, n_w, a_c, a_w, old_c, old_w, rho_c, rho_w, dz, du, s } = work;
  const eps_high = cfg.clip_eps_high === null ? cfg.clip_eps : cfg.clip_eps_high;
  let total = 0;
  for (let n = 0; n < N; n++) {
    n_c[n] = weight[n] * k[n];
    n_w[n] = weight[n] * (G - k[n]);
    a_c[n] = table.A_correct[k[n]];
    a_w[n] = table.A_wrong[k[n]];
    total += weight[n];
  }
  const B = G * total; // answers in the batch
  const inv_B = B > 0 ? 1 / B : 0; // an empty batch: no update
  if (cfg.scale === "batch") { // the batch std couples the groups: divide the unscaled table by it
    let correct = 0;
    for (let n = 0; n < N; n++) correct += n_c[n];
    const mean = correct * inv_B;
    const batch_std = Math.sqrt(B * mean * (1 - mean) / Math.max(B - cfg.ddof, 1));
    const den = batch_std + cfg.eps > 0 ? batch_std + cfg.eps : 1; // eps = 0, one reward: as group_advantages
    for (let n = 0; n < N; n++) {
      a_c[n] /= den;
      a_w[n] /= den;
    }
  }
  let clip = 0;
  for (let step = 0; step < cfg.mu; step++) {
    const pol = step === 0 && now !== null ? now : work.pol;
    for (let j = 0; j < P; j++) {
      if (pol !== now) policy(w + u[base + j] - d[j], pol, j);
      if (step === 0) { // pi_old is the sampling state: rho = 1 exactly
        old_c[j] = pol.lp_c[j];
        old_w[j] = pol.lp_w[j];
      } else {
        rho_c[j] = Math.exp(pol.lp_c[j] - old_c[j]);
        rho_w[j] = Math.exp(pol.lp_w[j] - old_w[j]);
      }
    }
    let kl = 0, surrogate = 0, abs_adv = 0, clipped = 0;
    for (let n = 0; n < N; n++) {
      const j = identity ? n : prompt[n];
      const p_c = pol.p_c[j], p_w = pol.p_w[j], lp_c = pol.lp_c[j], lp_w = pol.lp_w[j];
      const first = step === 0;
      surrogateGrad(a_c[n], first ? 1 : rho_c[j], first, cfg, eps_high, s);
      let ns_c = n_c[n] * s[0];
      clipped += n_c[n] * s[1];
      surrogateGrad(a_w[n], first ? 1 : rho_w[j], first, cfg, eps_high, s);
      let ns_w = n_w[n] * s[0];
      clipped += n_w[n] * s[1];
      if (first) { // first_step_metrics: k3 over the sampled answers, the loss at rho = 1, mean |A|
        const k3_c = k3(ref.p_c[j], p_c, ref.lp_c[j], lp_c), k3_w = k3(ref.p_w[j], p_w, ref.lp_w[j], lp_w);
        kl += (n_c[n] > 0 ? n_c[n] * k3_c : 0) + (n_w[n] > 0 ? n_w[n] * k3_w : 0); // never-sampled: weight 0
        surrogate += cfg.loss_type === "cispo"
          ? (n_c[n] > 0 ? ns_c * lp_c : 0) + (n_w[n] > 0 ? ns_w * lp_w : 0) // -sg(min(rho, eps_max)) A log pi
          : ns_c + ns_w; // PPO's surrogate at rho = 1: A
        abs_adv += n_c[n] * Math.abs(a_c[n]) + n_w[n] * Math.abs(a_w[n]);
      }
      if (cfg.beta > 0) {
        ns_c = ns_c - cfg.beta * (n_c[n] * (1 - ref.p_c[j] / p_c));
        ns_w = ns_w - cfg.beta * (n_w[n] * (1 - ref.p_w[j] / p_w));
      }
      dz[n] = logitGrad(ns_c, ns_w, p_c, p_w, -inv_B);
    }
    clip += clipped * inv_B / cfg.mu;
    du.fill(0);
    for (let n = 0; n < N; n++) du[identity ? n : prompt[n]] += dz[n];
    let dw = 0, norm = 0; // step_w: w enters every logit, so dL/dw sums dL/du over the prompts
    for (let j = 0; j < P; j++) {
      dw += du[j];
      norm += du[j] * du[j];
    }
    if (step === 0) {
      kl *= inv_B;
      m.kl.data[i] = kl;
      m.loss.data[i] = -surrogate * inv_B + cfg.beta * kl;
      m.mean_abs_adv.data[i] = abs_adv * inv_B;
      m.grad_norm.data[i] = Math.sqrt(norm + dw * dw);
    }
    for (let j = 0; j < P; j++) u[base + j] -= cfg.lr * du[j];
    w -= run.lr_w * dw;
  }
  m["clip_ratio/region_mean"].data[i] = clip;
  return w;
}

// ================================================================ the runs (sim/toy/runs.py, history.py)

// What a run records (sim.toy.history.ToyHistory), indexed [t][seed][prompt] as in Python.
function newHistory(cfg, S, P, d) {
  const T = cfg.iterations;
  const metrics = {};
  for (const name of TOY.STEP_METRICS) metrics[name] = ndarray([T, S]);
  return { config: cfg, difficulties: { shape: [P], data: d }, p: ndarray([T + 1, S, P]),
    u: ndarray([T + 1, S, P]), w: ndarray([T + 1, S]), accuracy: ndarray([T + 1, S]), kl_exact: ndarray([T + 1, S]),
    entropy: ndarray([T + 1, S]), answers: ndarray([T + 1, S]), counts: ndarray([T, S, P]), metrics,
    no_signal: new Float64Array((T + 1) * S) };
}

// The run's shared pieces: its config, d (P,), the reference policy (the initial one) and the advantage table.
function toyRun(cfg, advantage_table) {
  const d = makeDifficulties(cfg), P = d.length, G = cfg.group_size;
  const ref = policyArrays(P);
  for (let j = 0; j < P; j++) policy(cfg.w_init + cfg.u_init - d[j], ref, j); // z_ref: the state at t = 0
  const table = advantage_table === null || advantage_table === undefined ? toyTable(cfg) : checkTable(cfg, advantage_table);
  return { cfg, G, P, d, ref, table, lr_w: cfg.lr_w === null ? cfg.lr : cfg.lr_w, log_choose: logChoose(G) };
}

const diverged = (t) => refused("diverged", { t });

// State t of seed s into the history: p, u, w and the state metrics, from u[base..base+P) and pol = policy(z).
function recordState(h, run, t, s, S, w, u, base, pol) {
  const P = run.P, row = (t * S + s) * P;
  for (let j = 0; j < P; j++) {
    h.p.data[row + j] = pol.p_c[j];
    h.u.data[row + j] = u[base + j];
  }
  h.w.data[t * S + s] = w;
  stateMetrics(pol, run.ref, P, run.G, h, t * S + s);
}

// History.finish: the metrics derived from the counts (T, S, P), reward = mean_j k_j / G and, for a sampled run,
// the shares of all-correct and all-wrong groups (expected_run sets its own); their sum frac_reward_zero_std;
// expected_zero_frac = mean_j p_j^G + (1 - p_j)^G at the state sampled from; answers made cumulative.
function finish(h, S, P, G, T, sampled) {
  const m = h.metrics, counts = h.counts.data;
  for (let i = 0; i < T * S; i++) {
    let sum = 0, correct = 0, wrong = 0;
    for (let j = 0; j < P; j++) {
      const k = counts[i * P + j];
      sum += k;
      correct += k === G ? 1 : 0;
      wrong += k === 0 ? 1 : 0;
    }
    m.reward.data[i] = sum / P / G;
    if (sampled) {
      m.frac_all_correct.data[i] = correct / P;
      m.frac_all_wrong.data[i] = wrong / P;
    }
    m.frac_reward_zero_std.data[i] = m.frac_all_correct.data[i] + m.frac_all_wrong.data[i];
    m.expected_zero_frac.data[i] = h.no_signal[i];
  }
  const answers = h.answers.data; // answers[t]: drawn in iterations 1..t
  for (let i = S; i < (T + 1) * S; i++) answers[i] += answers[i - S];
  delete h.no_signal;
  return h;
}

// run_toy (sim/toy/runs.py): S = n_seeds independent sampled runs of the toy. Each iteration draws k_j ~
// Binomial(G, p_j) correct answers per prompt (the inverse CDF of the uniform sim/rng.py assigns), refills
// all-equal groups under dynamic sampling, and applies countUpdate. Seed s draws with key seed + s.
// options.advantageTable = {A_correct, A_wrong} over k = 0..G replaces the config's advantages ("Use my lab
// code"; scale group or none). options.onIteration(t) is called after iteration t (1..T).
// Throws for an invalid config (naming the setting) and "the run diverged at iteration t ..." for a run that does.
export function runToy(config, { advantageTable = null, onIteration = null } = {}) {
  const cfg = toyConfig(config);
  const run = toyRun(cfg, advantageTable);
  const { G, P, d, log_choose } = run, S = cfg.n_seeds, T = cfg.iterations;
  const h = newHistory(cfg, S, P, d);
  const w = new Float64Array(S).fill(cfg.w_init); // (S,) the shared skill of each seed
  const u = new Float64Array(S * P).fill(cfg.u_init); // (S, P) the per-prompt parameters, seed s at s P
  const keys = []; // seed s of the band draws with key seed + s
  for (let s = 0; s < S; s++) keys.push(keyWords(cfg.seed, s));
  const work = updateWork(P, P), now = policyArrays(P); // the batch's P slots; (P,) policy of the state
  const first = new Float64Array(P), words = new Uint32Array(4); // (P,) the first draw's uniforms
  for (let t = 0; t <= T; t++) {
    for (let s = 0; s < S; s++) {
      const base = s * P; // seed s's parameters u[base..base+P)
      for (let j = 0; j < P; j++) policy(w[s] + u[base + j] - d[j], now, j); // (P,) the state sampled from
      recordState(h, run, t, s, S, w[s], u, base, now);
      if (t === T) continue;
      // the first draw: one group per prompt, k_j at uniform j of the stream (seed + s, t, 0, TOY)
      streamUniforms(keys[s][0], keys[s][1], t, 0, TOY_STREAM, P, first, words);
      const row = (t * S + s) * P;
      for (let j = 0; j < P; j++) {
        work.k[j] = inverseCdf(first[j], G, now.p_c[j], now.p_w[j], now.lp_c[j], now.lp_w[j], log_choose);
        work.prompt[j] = j;
        work.weight[j] = 1;
        h.counts.data[row + j] = work.k[j];
      }
      let answers = G * P;
      if (cfg.dynamic_sampling) answers += refill(run, keys[s], t, now, work, words);
      h.answers.data[(t + 1) * S + s] = answers;
      w[s] = countUpdate(w[s], u, base, P, !cfg.dynamic_sampling, run, work, h.metrics, t * S + s, now);
      let n_groups = 0;
      for (let j = 0; j < P; j++) n_groups += work.weight[j];
      h.metrics.n_groups.data[t * S + s] = n_groups;
    }
    if (t < T) {
      let sum = 0;
      for (let i = 0; i < S * P; i++) sum += u[i];
      for (let s = 0; s < S; s++) sum += w[s];
      if (!Number.isFinite(sum)) throw diverged(t + 1);
      if (onIteration !== null) onIteration(t + 1);
    }
  }
  return finish(h, S, P, G, T, true);
}

// Dynamic sampling (DAPO), sim.toy.runs._draw_batch: every round r = 1..max_redraws, each empty slot (a group
// whose G rewards were all equal) draws a prompt floor(U P) and a fresh group for it, from block j of the
// stream (seed + s, t, r, TOY). Fills work's slots (weight 0: left empty) and returns the extra answers drawn.
function refill(run, key, t, now, work, words) {
  const { cfg, G, P, log_choose } = run;
  let extra = 0;
  for (let j = 0; j < P; j++) work.weight[j] = work.k[j] > 0 && work.k[j] < G ? 1 : 0;
  for (let r = 1; r <= cfg.max_redraws; r++) {
    let empty = 0;
    for (let j = 0; j < P; j++) {
      if (work.weight[j] === 1) continue;
      empty++;
      philox(j, t, r, TOY_STREAM, key[0], key[1], words);
      const i = Math.min(Math.floor(uniform(words[0], words[1]) * P), P - 1); // the prompt, uniform over the pool
      const k = inverseCdf(uniform(words[2], words[3]), G, now.p_c[i], now.p_w[i], now.lp_c[i], now.lp_w[i],
        log_choose);
      if (k > 0 && k < G) {
        work.prompt[j] = i;
        work.k[j] = k;
        work.weight[j] = 1;
      }
    }
    if (empty === 0) break;
    extra += G * empty;
  }
  return extra;
}

// expected_run (sim/toy/runs.py, its slots form): the "average run", one seed, no sampling. Each step applies
// countUpdate to every (prompt j, count k) slot weighted by P(k_j = k) = Binomial(G, p_j). With dynamic
// sampling each empty slot ends up with prompt i with probability proportional to 1 - q_i, q_i = p_i^G +
// (1 - p_i)^G (unlimited redraws); max_redraws only enters the answers spent and n_groups. counts holds G p_j.
export function expectedRun(config, { advantageTable = null } = {}) {
  const cfg = { ...toyConfig(config), n_seeds: 1 };
  const run = toyRun(cfg, advantageTable);
  const { G, P, d, log_choose } = run, T = cfg.iterations, slots = P * (G + 1);
  const N = cfg.dynamic_sampling ? 2 * slots : slots; // slots: (P, G+1) pairs, twice under dynamic sampling
  const h = newHistory(cfg, 1, P, d);
  const m = h.metrics;
  let w = cfg.w_init;
  const u = new Float64Array(P).fill(cfg.u_init); // (P,)
  const work = updateWork(N, P), now = policyArrays(P);
  const pmf = new Float64Array(slots), q = new Float64Array(P); // (P, G+1) P(k_j = k); (P,) P(flat group)
  for (let n = 0; n < N; n++) { // slot n: prompt j, k correct
    work.prompt[n] = Math.floor((n % slots) / (G + 1));
    work.k[n] = n % (G + 1);
  }
  for (let t = 0; t <= T; t++) {
    for (let j = 0; j < P; j++) policy(w + u[j] - d[j], now, j);
    recordState(h, run, t, 0, 1, w, u, 0, now);
    if (t === T) break;
    let q_sum = 0, all_correct = 0, all_wrong = 0;
    for (let j = 0; j < P; j++) {
      const p = now.p_c[j];
      expectedPmf(now.lp_c[j], now.lp_w[j], log_choose, pmf, j * (G + 1));
      q[j] = pmf[j * (G + 1)] + pmf[j * (G + 1) + G]; // chance of a flat group
      q_sum += q[j];
      all_correct += pmf[j * (G + 1) + G];
      all_wrong += pmf[j * (G + 1)];
      h.counts.data[t * P + j] = G * p;
    }
    let answers = G * P, n_groups = P;
    if (cfg.dynamic_sampling) {
      let informative = 0; // sum_i (1 - q_i): the pmf without k = 0 and k = G
      for (let n = 0; n < slots; n++) {
        const k = n % (G + 1);
        work.weight[n] = k === 0 || k === G ? 0 : pmf[n];
        informative += work.weight[n];
      }
      for (let n = 0; n < slots; n++) work.weight[slots + n] = informative > 0 ? q_sum * work.weight[n] / informative : 0;
      const q_bar = q_sum / P; // a refill draw (a uniform prompt) is flat with probability q_bar
      let rounds = 0;
      for (let r = 0; r < cfg.max_redraws; r++) rounds += q_bar ** r;
      answers = G * (P + q_sum * rounds);
      n_groups = P - q_sum * q_bar ** cfg.max_redraws;
    } else {
      work.weight.set(pmf);
    }
    w = countUpdate(w, u, 0, N, false, run, work, m, t, now);
    let sum = w;
    for (let j = 0; j < P; j++) sum += u[j];
    if (!Number.isFinite(sum)) throw diverged(t + 1);
    m.frac_all_correct.data[t] = all_correct / P;
    m.frac_all_wrong.data[t] = all_wrong / P;
    m.n_groups.data[t] = n_groups;
    h.answers.data[t + 1] = answers;
  }
  return finish(h, 1, P, G, T, false);
}

// first_above (sim.toy.history): the first index t with series[t] > level, or null.
export function firstAbove(series, level) {
  for (let t = 0; t < series.length; t++) if (series[t] > level) return t;
  return null;
}

// The mean over seeds of a (T, S) or (T, S, P) result at prompt j: a Float64Array (T,).
export function seedMean(x, j = null) {
  const [T, S] = x.shape, P = x.shape.length === 3 ? x.shape[2] : 1;
  const out = new Float64Array(T);
  for (let t = 0; t < T; t++) {
    let sum = 0;
    for (let s = 0; s < S; s++) sum += x.data[(t * S + s) * P + (j === null ? 0 : j)];
    out[t] = sum / S;
  }
  return out;
}

// ================================================================ the sharpening toy (sim/sharpen.py)

// pass@k with a known success probability p: 1 - (1 - p)^k = -expm1(k log1p(-p)) (sim.passk.pass_at_k_known_p).
export function passAtKKnownP(p, k) {
  return 0 - Math.expm1(k * Math.log1p(-p));
}

// The mean over problems of pass@k for each k of ks: (K,) (sim.passk.mean_pass_at_k_known_p).
export function meanPassAtKKnownP(p, ks) {
  return Float64Array.from(ks, (k) => {
    let sum = 0;
    for (const pj of p) sum += passAtKKnownP(pj, k);
    return sum / p.length;
  });
}

// sim.passk.crossover_k: the k where two pass@k curves cross (interpolated in log k, or in k), or null.
// d = a - b; differences within atol are ties; the first k whose sign is opposite the first nonzero one.
export function crossoverK(ks, curve_a, curve_b, { scale = "log", atol = 1e-12 } = {}) {
  const n = ks.length, d = new Float64Array(n), sign = new Int8Array(n);
  for (let i = 0; i < n; i++) {
    d[i] = curve_a[i] - curve_b[i];
    sign[i] = Math.abs(d[i]) <= atol ? 0 : Math.sign(d[i]);
  }
  const first_nonzero = sign.findIndex((x) => x !== 0);
  if (first_nonzero < 0) return null;
  const j = sign.findIndex((x) => x === -sign[first_nonzero]);
  if (j < 0) return null;
  let m = j - 1;
  while (sign[m] === 0) m--; // the last point still on the first side
  if (m + 1 < j) return ks[m + 1]; // the curves touched between m and j: where they first touched
  const x = scale === "log" ? (i) => Math.log(ks[i]) : (i) => ks[i];
  const root = x(m) + (d[m] / (d[m] - d[j])) * (x(j) - x(m));
  return scale === "log" ? Math.exp(root) : root;
}

function softmax(theta, out) {
  let max = -Infinity, sum = 0;
  for (const x of theta) max = Math.max(max, x);
  for (let i = 0; i < theta.length; i++) {
    out[i] = Math.exp(theta[i] - max);
    sum += out[i];
  }
  for (let i = 0; i < theta.length; i++) out[i] /= sum;
  return out;
}

// H(pi) = -sum_k pi_k log pi_k in nats (sim.sharpen.entropy).
function strategyEntropy(pi) {
  let sum = 0;
  for (const x of pi) if (x > 0) sum += x * Math.log(x);
  return -sum;
}

// sim.sharpen.train (method "counts"): GRPO on strategy logits theta shared by every problem. Each iteration
// samples groups_per_problem groups of G strategies per problem (rows b = problem * groups_per_problem + g'),
// answer g of row b at uniforms 2g (strategy, by inversion of cumsum(pi)) and 2g + 1 (reward: U < success)
// of the stream (seed, i, b, SHARPEN); then the GRPO gradient from counts (grad_counts)
//   d loss / d theta = -(1/B) sum_i A_i (onehot(y_i) - pi),   A_i from the advantage table by the row's count,
// and a plain step theta -= lr grad. Returns SharpenHistory's arrays and crossover_k (k = 1..64, KS).
export function runSharpen(config) {
  const cfg = sharpenConfig(config);
  const success = cfg.success, P = success.length, K = success[0].length, G = cfg.group_size;
  const R = P * cfg.groups_per_problem, I = cfg.iterations;
  const table = advantageTable(G, { scale: cfg.scale, ddof: cfg.ddof, eps: cfg.eps });
  const [k0, k1] = keyWords(cfg.seed);
  const theta = Float64Array.from(cfg.init_probs, Math.log);
  const probs = ndarray([I + 1, K]), reward = ndarray([I]), frac = ndarray([I]);
  const pi = softmax(theta, new Float64Array(K)), cdf = new Float64Array(K), words = new Uint32Array(4);
  const strategy = new Int32Array(G), correct = new Uint8Array(G), per_strategy = new Float64Array(K);
  probs.data.set(pi, 0);
  for (let i = 0; i < I; i++) {
    let c = 0;
    for (let k = 0; k < K; k++) cdf[k] = c += pi[k];
    per_strategy.fill(0);
    let adv_sum = 0, rewards = 0, flat = 0;
    for (let b = 0; b < R; b++) {
      const row = success[Math.floor(b / cfg.groups_per_problem)];
      let count = 0;
      for (let g = 0; g < G; g++) { // sample_groups
        philox(g, i, b, SHARPEN_STREAM, k0, k1, words);
        const x = uniform(words[0], words[1]) * cdf[K - 1];
        let y = 0;
        while (y < K && cdf[y] <= x) y++; // searchsorted(cdf, x, "right")
        strategy[g] = Math.min(y, K - 1);
        correct[g] = uniform(words[2], words[3]) < row[strategy[g]] ? 1 : 0;
        count += correct[g];
      }
      for (let g = 0; g < G; g++) { // grad_counts: A_i looked up by the row's count
        const a = correct[g] ? table.A_correct[count] : table.A_wrong[count];
        per_strategy[strategy[g]] += a;
        adv_sum += a;
      }
      rewards += count;
      flat += count === 0 || count === G ? 1 : 0;
    }
    for (let k = 0; k < K; k++) theta[k] -= cfg.lr * (-(per_strategy[k] - adv_sum * pi[k]) / (R * G));
    softmax(theta, pi);
    probs.data.set(pi, (i + 1) * K);
    reward.data[i] = rewards / (R * G);
    frac.data[i] = flat / R;
  }
  const p = ndarray([I + 1, P]), entropy = ndarray([I + 1]), pass_at_1 = ndarray([I + 1]), pass_at_k = ndarray([I + 1]);
  for (let i = 0; i <= I; i++) {
    const pi_i = probs.data.subarray(i * K, (i + 1) * K);
    let mean = 0, mean_k = 0;
    for (let j = 0; j < P; j++) { // p_j = sum_k pi_k success[j, k]
      let pj = 0;
      for (let k = 0; k < K; k++) pj += pi_i[k] * success[j][k];
      p.data[i * P + j] = pj;
      mean += pj;
      mean_k += passAtKKnownP(pj, cfg.k_eval);
    }
    entropy.data[i] = strategyEntropy(pi_i);
    pass_at_1.data[i] = mean / P;
    pass_at_k.data[i] = mean_k / P;
  }
  const ks = DECLARATIONS.passk.KS;
  const before = meanPassAtKKnownP(p.data.subarray(0, P), ks);
  const after = meanPassAtKKnownP(p.data.subarray(I * P, (I + 1) * P), ks);
  return { config: cfg, probs, p, entropy, pass_at_1, pass_at_k, reward, frac_reward_zero_std: frac,
    crossover_k: crossoverK(ks, after, before), ks, curve_before: before, curve_after: after };
}

// ================================================================ Std scaling (sim/exercises.py, sim/views/std_scaling.py)

// sim.exercises.mean_abs_advantage: mean |A_i| over a group of G 0/1 rewards with c correct, for c = 0..G.
export function meanAbsAdvantage(G, { scale = "group", ddof = 0, eps = 1e-4 } = {}) {
  const { A_correct, A_wrong } = advantageTable(G, { scale, ddof, eps });
  return Float64Array.from({ length: G + 1 }, (_, c) => (c * Math.abs(A_correct[c]) + (G - c) * Math.abs(A_wrong[c])) / G);
}

// sim.exercises.expected_mean_abs_advantage: E[mean |A|] = sum_c Binomial(c; G, p) mean_abs_advantage(c, G).
export function expectedMeanAbsAdvantage(p, G, { scale = "group", ddof = 0, eps = 1e-4 } = {}) {
  const per_c = meanAbsAdvantage(G, { scale, ddof, eps }), pmf = binomialPmf(p, G);
  let sum = 0;
  for (let c = 0; c <= G; c++) sum += pmf[c] * per_c[c];
  return sum;
}

// sim.exercises.first_step_size: lr E[mean |A|] of the toy's first batch, the prompts' mean at p_j =
// sigmoid(w + u - d_j): how far the first update moves (scale "group" or "none").
export function firstStepSize(config) {
  const cfg = toyConfig(config);
  const d = makeDifficulties(cfg);
  let sum = 0;
  for (const dj of d) {
    const p0 = 1 / (1 + Math.exp(-(cfg.w_init + cfg.u_init - dj)));
    sum += expectedMeanAbsAdvantage(p0, cfg.group_size, { scale: cfg.scale, ddof: cfg.ddof, eps: cfg.eps });
  }
  return cfg.lr * (sum / d.length);
}

// sim.exercises.matched_lr: the lr at which the toy with `scale` takes a first step as large as config's.
export function matchedLr(config, scale) {
  return firstStepSize(config) / firstStepSize({ ...config, scale, lr: 1 });
}

// sim.exercises.std_comparison: means over the config's seeds of three runs, with std; without std at the
// same lr; without std at the lr that gives the same first step (matchedLr). Per run: lr, the first step size,
// accuracy (T+1,), the hardest prompt's p (T+1,) and the iteration it passes hard_level (or null).
export function stdComparison(config, hard_level = HARD) {
  const with_std = toyConfig(config);
  const runs = {
    "with std": with_std,
    "without std, same lr": { ...with_std, scale: "none" },
    "without std, same first step": { ...with_std, scale: "none", lr: matchedLr(with_std, "none") },
  };
  const out = {};
  for (const [name, cfg] of Object.entries(runs)) {
    const h = runToy(cfg);
    const hard = seedMean(h.p, h.p.shape[2] - 1);
    out[name] = { lr: cfg.lr, step: firstStepSize(cfg), accuracy: seedMean(h.accuracy), hard,
      hard_starts: firstAbove(hard, hard_level) };
  }
  return out;
}
