// Runs assets/js/engine.js on a list of jobs (tests/js/jobs.mjs) and writes what each returned, for
// tests/test_engine_js.py to compare with sim/. Usage: node tests/js/run_jobs.mjs JOBS.json RESULTS.json
// Every Float64Array travels as base64 of its little-endian bytes (exact); NaN and infinities in a config as
// {"float": "nan"} (JSON has none).
import { readFileSync, writeFileSync } from "node:fs";
import * as engine from "../../assets/js/engine.js";
import { runJob } from "./jobs.mjs";

const [jobsPath, outPath] = process.argv.slice(2);
const FLOATS = { nan: NaN, inf: Infinity, "-inf": -Infinity };
const jobs = JSON.parse(readFileSync(jobsPath, "utf8"), (_, v) => (v && v.float in FLOATS ? FLOATS[v.float] : v));

function pack(data, shape) {
  return { shape, b64: Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString("base64") };
}

writeFileSync(outPath, JSON.stringify(jobs.map((job) => runJob(engine, job, pack))));
