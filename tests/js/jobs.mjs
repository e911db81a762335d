// One job of tests/test_engine_js.py on assets/js/engine.js, shared by node (run_jobs.mjs) and Chromium (the e2e
// test loads it as a classic script). A job is {kind, config, table?}: "toy" (runToy), "expected" (expectedRun),
// "sharpen" (runSharpen), "std" (stdComparison), "toy_config" / "sharpen_config" (validation only). The result:
// {ok: true, arrays: {name: pack(Float64Array, shape)}, values} or {ok: false, error: the message}.
export function runJob(engine, job, pack) {
  try {
    return { ok: true, ...result(engine, job, pack) };
  } catch (err) {
    return { ok: false, error: err.message };
  }
}

function history(h, pack) {
  const arrays = {};
  for (const [name, x] of Object.entries(h)) {
    if (x && x.data instanceof Float64Array) arrays[name] = pack(x.data, x.shape);
  }
  for (const [name, x] of Object.entries(h.metrics ?? {})) arrays[`metrics/${name}`] = pack(x.data, x.shape);
  return arrays;
}

function result(engine, job, pack) {
  const table = job.table ? { A_correct: job.table[0], A_wrong: job.table[1] } : null;
  switch (job.kind) {
    case "toy":
      return { arrays: history(engine.runToy(job.config, { advantageTable: table }), pack) };
    case "expected":
      return { arrays: history(engine.expectedRun(job.config, { advantageTable: table }), pack) };
    case "sharpen": {
      const h = engine.runSharpen(job.config);
      return { arrays: history(h, pack), values: { crossover_k: h.crossover_k } };
    }
    case "std": {
      const runs = engine.stdComparison(job.config), arrays = {}, values = {};
      for (const [name, r] of Object.entries(runs)) {
        arrays[`${name}/accuracy`] = pack(r.accuracy, [r.accuracy.length]);
        arrays[`${name}/hard`] = pack(r.hard, [r.hard.length]);
        values[name] = { lr: r.lr, step: r.step, hard_starts: r.hard_starts };
      }
      return { arrays, values };
    }
    case "toy_config":
      engine.toyConfig(job.config);
      return {};
    case "sharpen_config":
      engine.sharpenConfig(job.config);
      return {};
    default:
      throw new Error(`unknown job kind ${job.kind}`);
  }
}
