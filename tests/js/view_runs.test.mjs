// assets/js/view_runs.js under node (run by tests/test_engine_js.py's `node --test tests/js/`): what a view asks the
// engine for, the expected run computed once for every seed of a setting, and what a Worker may hand over.
import assert from "node:assert/strict";
import { test } from "node:test";
import { buffers, viewRuns } from "../../assets/js/view_runs.js";

const small = { n_seeds: 3, iterations: 20, lr_w: 0.2 };

test("a seed's new run reuses the setting's expected run, and the worker copies it instead of handing it over", () => {
  const a = viewRuns({ view: "training", config: { ...small, seed: 1 } });
  const b = viewRuns({ view: "training", config: { ...small, seed: 2, n_seeds: 5 } });
  assert.equal(a.exp, b.exp); // no seed or band enters the expected run
  assert.notEqual(a.run, b.run);
  const c = viewRuns({ view: "training", config: { ...small, seed: 1, group_size: 16 } });
  assert.notEqual(c.exp, a.exp);
  const handed = buffers(b);
  assert.ok(handed.has(b.run.p.data.buffer) && !handed.has(b.exp.p.data.buffer));
});

test("mu > 1 adds PPO's clip at the same setting for the caption; a pinned run and a student's table their runs", () => {
  assert.equal(viewRuns({ view: "training", config: { ...small, mu: 8 } }).ppo, undefined); // it is PPO's clip
  const r = viewRuns({ view: "training", config: { ...small, mu: 4, loss_type: "cispo", clip_eps_high: 5 },
    pinned: { label: "pinned", config: { ...small, seed: 9 } },
    table: [Array(9).fill(0.5), Array(9).fill(-0.5)] }); // prettier-ignore
  assert.equal(r.ppo.config.loss_type, "grpo");
  assert.equal(r.pinned.config.seed, 9);
  assert.deepEqual(r.mine.p.shape, [21, 1, 24]);
});

test("a refused setting throws the engine's message", () => {
  assert.throws(() => viewRuns({ view: "training", config: { group_size: 1 } }),
    /group_size must be an integer in \[2, 1024\], got 1/);
  assert.throws(() => viewRuns({ view: "nope", config: {} }), /not a live view/);
});
