// The fuzz driver: builds the cases, runs them in batches in child processes (at most `jobs` at once),
// isolates crashes (a child killed by a signal, exiting abnormally, or running past its time), and
// classifies every outcome against the contract: a TypeError/RangeError whose message starts with
// `<function>: <parameter>`. Anything that returned or threw a CudaError reached C.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import type { ChildCall, ChildListing, ChildOutcome, ChildRequest } from './child';
import { rawCases, typedCases, withNeutrals, type FuzzCase } from './cases';
import { loadSignatures, readIR, type FuzzParam, type ModuleSignatures } from './model';
import { SUPPORT_CALLER, supportCases } from './support-api';

export interface FuzzOptions {
  /** Repository root. */
  root: string;
  version?: string;
  modules?: string[];
  /** Children running at once. */
  jobs?: number;
  /** Calls per child. */
  batchSize?: number;
  /** Re-run a crashing call alone to confirm it (costs one child per crash). */
  confirmCrashes?: boolean;
  /** Stop after this many crashes (the report says it stopped). */
  maxCrashes?: number;
  /** Time one child may take: base + per call, in ms. */
  timeoutBaseMs?: number;
  timeoutPerCallMs?: number;
  /** Rounds of retrying misattributed cases with other neutral values (see neutralCandidates). */
  neutralRounds?: number;
  /** Include the raw-layer cases. */
  raw?: boolean;
  /** Include the public support helpers' cases (support-api.ts); off unless asked for. */
  support?: boolean;
  /** Limit to these function names (debugging). */
  only?: string[];
  /** Progress lines. */
  log?: (line: string) => void;
}

export type Outcome =
  | 'rejected' // a TypeError/RangeError naming the function and the parameter: correct
  | 'reachedC' // returned, or threw a CudaError (library loaded or called): validation let it through
  | 'unnamed' // threw, but not a TypeError/RangeError naming the function
  | 'misattributed' // named the function but another parameter (a neutral value was refused)
  | 'crash' // the child died (signal or abnormal exit) in this call
  | 'timeout'; // the child ran past its time in this call

export interface CaseResult {
  c: FuzzCase;
  outcome: Outcome;
  /** What happened: the error class and message, the returned value, or the signal. */
  detail: string;
  /** For crashes: whether the call crashed again when run alone. */
  confirmed?: boolean;
}

export interface LayerCounts {
  functions: number;
  cases: number;
  rejected: number;
  crashes: number;
  reachedC: number;
  unnamed: number;
  misattributed: number;
}

export interface SignatureMismatch {
  module: string;
  fn: string;
  problem: string;
}

export interface FuzzReport {
  version: string;
  modules: string[];
  /** Per module: where the typed signatures came from. */
  sources: Record<string, ModuleSignatures['source']>;
  typed: LayerCounts;
  raw: LayerCounts;
  /** The public support helpers (`reachedC` there: the helper returned, taking the bad value). */
  support: LayerCounts;
  mismatches: SignatureMismatch[];
  /** Every case that is not a correct rejection. */
  failures: CaseResult[];
  /** True when maxCrashes stopped the run early. */
  stopped: boolean;
  seconds: number;
}

const emptyCounts = (): LayerCounts => ({ functions: 0, cases: 0, rejected: 0, crashes: 0, reachedC: 0, unnamed: 0, misattributed: 0 });

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Classifies a call's outcome against the contract: a TypeError or RangeError naming the function and
 *  the parameter (a support helper may name instead the call and argument it was given to check). */
export function classify(c: FuzzCase, o: ChildOutcome): { outcome: Outcome; detail: string } {
  if (o.r === 'returned') return { outcome: 'reachedC', detail: `returned ${o.value}` };
  const detail = `${o.cls}: ${o.msg}`;
  if (o.kind === 'CudaError') return { outcome: 'reachedC', detail };
  if (o.kind !== 'TypeError' && o.kind !== 'RangeError') return { outcome: 'unnamed', detail };
  const names = (fn: string, param: string) => new RegExp(`^${escape(fn)}: ${escape(param)}(?![\\w$])`).test(o.msg);
  if (names(c.fn, c.param) || (c.layer === 'support' && names(SUPPORT_CALLER.fn, SUPPORT_CALLER.param))) return { outcome: 'rejected', detail };
  if (o.msg.startsWith(`${c.fn}: `)) return { outcome: 'misattributed', detail };
  return { outcome: 'unnamed', detail };
}

interface ChildRun {
  outcomes: ChildOutcome[];
  /** null when the child exited 0 after its last call. */
  death: null | { how: 'signal' | 'exit' | 'timeout'; what: string; stderr: string };
}

const HARNESS_ROOT = join(__dirname, '..', '..');

/**
 * The arguments that run the child under this runtime: Node loads tsx's ESM hook; Bun and Deno (the GPU
 * suites run under each) take the repository's CommonJS runner, which registers tsx there.
 */
function childArgs(file: string): string[] {
  if (process.versions.bun || process.versions.deno) return [join(HARNESS_ROOT, 'scripts', 'run-ts.cjs'), file];
  return ['--import', 'tsx', file];
}

/** Runs one child on a request; resolves with the result lines it wrote and how it ended. */
function runChild(root: string, request: ChildRequest, timeoutMs: number): Promise<ChildRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, childArgs(join(__dirname, 'child.ts')), {
      cwd: HARNESS_ROOT, // where tsx is installed; the request names the modules' root
      stdio: ['pipe', 'ignore', 'pipe', 'pipe'],
      env: { ...process.env, NODE_OPTIONS: '' },
    });
    let results = '';
    let stderr = '';
    let timedOut = false;
    child.stdio[3]!.on('data', (d: Buffer) => (results += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
    child.on('error', reject);
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const outcomes = results
        .split('\n')
        .filter((l) => l.trim())
        .map((l) => JSON.parse(l) as ChildOutcome);
      if (code === 71) return reject(new Error(`fuzz child failed to run (not a crash of a case):\n${stderr}`));
      const death = timedOut
        ? { how: 'timeout' as const, what: `no answer within ${timeoutMs} ms`, stderr }
        : signal
          ? { how: 'signal' as const, what: signal, stderr }
          : code !== 0
            ? { how: 'exit' as const, what: `exit code ${code}`, stderr }
            : null;
      resolve({ outcomes, death });
    });
    child.stdin!.end(JSON.stringify(request));
  });
}

/** Runs tasks with at most `jobs` at once. */
async function pool<T>(items: T[], jobs: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(jobs, items.length) }, worker));
}

/** What the child said last on stderr (koffi's and V8's last words before an abort), in one line. */
function lastLine(stderr: string): string {
  const lines = stderr
    .trim()
    .split('\n')
    .filter((l) => l.trim() && !/^Node\.js v/.test(l) && !/^\s+at /.test(l));
  return lines.length ? ` (${lines.slice(-3).join(' | ').slice(0, 300)})` : '';
}

/** An id after every case's so far (the support cases are numbered after the modules' cases). */
function nextCaseId(cases: FuzzCase[]): number {
  let id = 0;
  for (const c of cases) id = Math.max(id, c.id + 1);
  return id;
}

/** Runs the whole fuzz and returns its report. */
export async function runFuzz(options: FuzzOptions): Promise<FuzzReport> {
  const started = Date.now();
  const root = options.root;
  const version = options.version ?? '13.0';
  const modules = options.modules ?? ['driver', 'runtime'];
  const jobs = options.jobs ?? 2;
  const batchSize = options.batchSize ?? 1500;
  const maxCrashes = options.maxCrashes ?? 400;
  const timeoutFor = (n: number) => (options.timeoutBaseMs ?? 20000) + n * (options.timeoutPerCallMs ?? 20);
  const log = options.log ?? (() => undefined);
  const only = options.only ? new Set(options.only) : undefined;

  // What the generated layers export, to check the model against (and to know the raw functions).
  const listed = await runChild(root, { mode: 'list', root, version, modules }, 120000);
  if (listed.death || listed.outcomes.length !== 1)
    throw new Error(`fuzz: listing the generated modules failed: ${listed.death?.what}${lastLine(listed.death?.stderr ?? '')}`);
  const listing = listed.outcomes[0] as unknown as ChildListing;

  const report: FuzzReport = {
    version,
    modules,
    sources: {},
    typed: emptyCounts(),
    raw: emptyCounts(),
    support: emptyCounts(),
    mismatches: [],
    failures: [],
    stopped: false,
    seconds: 0,
  };
  const cases: FuzzCase[] = [];
  const signatures = new Map<string, Map<string, FuzzParam[]>>();
  for (const module of modules) {
    const ir = readIR(root, version, module);
    const cNames = new Set(ir.functions.map((f) => f.name));
    const sigs = loadSignatures(root, version, module);
    report.sources[module] = sigs.source;
    const exported = listing[module].typed;
    const usable = new Map<string, FuzzParam[]>();
    for (const [fn, params] of sigs.functions) {
      if (!(fn in exported)) report.mismatches.push({ module, fn, problem: 'in the model but not exported by the typed layer' });
      else if (exported[fn] > params.length)
        report.mismatches.push({ module, fn, problem: `the typed function requires ${exported[fn]} arguments, the model lists ${params.length}` });
      else usable.set(fn, params);
    }
    for (const fn of Object.keys(exported)) {
      if (cNames.has(fn) && !sigs.functions.has(fn)) report.mismatches.push({ module, fn, problem: 'exported by the typed layer but not in the model' });
    }
    signatures.set(module, usable);
    const typed = typedCases(module, usable, only);
    report.typed.functions += new Set(typed.map((c) => c.fn)).size;
    cases.push(...typed);
    if (options.raw !== false) {
      const raw = rawCases(module, ir, new Set(Object.keys(listing[module].raw)), only);
      report.raw.functions += new Set(raw.map((c) => c.fn)).size;
      cases.push(...raw);
    }
  }
  if (options.support) {
    const support = supportCases(nextCaseId(cases), only);
    report.support.functions = new Set(support.map((c) => c.fn)).size;
    cases.push(...support);
  }
  for (const layer of ['typed', 'raw', 'support'] as const) report[layer].cases = cases.filter((c) => c.layer === layer).length;
  log(
    `fuzz: ${cases.length} cases (${report.typed.cases} typed, ${report.raw.cases} raw, ${report.support.cases} support) in batches of ${batchSize}, ${jobs} at once`,
  );

  let crashes = 0;
  const results = new Map<number, CaseResult>();
  const toCall = (c: FuzzCase): ChildCall => ({ id: c.id, layer: c.layer, module: c.module, fn: c.fn, args: c.args });
  const runBatch = (batch: FuzzCase[]) => runChild(root, { mode: 'run', root, version, calls: batch.map(toCall) }, timeoutFor(batch.length));

  // A batch runs until it ends or its child dies; the call in flight is charged with the death, the
  // rest of the batch continues in a fresh child.
  const work = async (batch: FuzzCase[]): Promise<void> => {
    let rest = batch;
    while (rest.length && !report.stopped) {
      const run = await runBatch(rest);
      const byId = new Map(run.outcomes.map((o) => [o.id, o]));
      let done = 0;
      for (const c of rest) {
        const o = byId.get(c.id);
        if (!o) break;
        results.set(c.id, { c, ...classify(c, o) });
        done++;
      }
      if (!run.death) {
        if (done !== rest.length) throw new Error(`fuzz child exited 0 after ${done} of ${rest.length} calls`);
        return;
      }
      if (done === rest.length) {
        // Every call answered, then the process died on its way out: charge the batch's last call.
        const last = rest[rest.length - 1];
        results.set(last.id, { c: last, outcome: 'crash', detail: `after the batch: ${run.death.what}${lastLine(run.death.stderr)}` });
        crashes++;
        return;
      }
      const culprit = rest[done];
      let confirmed: boolean | undefined;
      if (options.confirmCrashes !== false && done > 0) {
        const alone = await runBatch([culprit]);
        confirmed = alone.death !== null && alone.outcomes.length === 0;
      } else if (done === 0) confirmed = true; // it was the first call of a fresh child: as good as alone
      results.set(culprit.id, {
        c: culprit,
        outcome: run.death.how === 'timeout' ? 'timeout' : 'crash',
        detail: `${run.death.what}${lastLine(run.death.stderr)}`,
        confirmed,
      });
      crashes++;
      if (crashes >= maxCrashes) report.stopped = true;
      log(`fuzz: ${run.death.how} in ${culprit.layer} ${culprit.fn}(${culprit.param} = ${culprit.value}): ${run.death.what}`);
      rest = rest.slice(done + 1);
    }
  };
  const execute = async (list: FuzzCase[]): Promise<void> => {
    const batches: FuzzCase[][] = [];
    for (let i = 0; i < list.length; i += batchSize) batches.push(list.slice(i, i + batchSize));
    await pool(batches, jobs, work);
  };
  await execute(cases);

  // A rejection naming another parameter of the function means that parameter's neutral value was
  // refused (e.g. a by-value record given as bytes): retry those cases with its next candidate.
  const choices = new Map<string, number[]>(); // `${module}.${fn}` → candidate index per parameter
  for (let round = 0; round < (options.neutralRounds ?? 4) && !report.stopped; round++) {
    const retry: FuzzCase[] = [];
    const bumped = new Set<string>();
    for (const r of results.values()) {
      if (r.outcome !== 'misattributed' || r.c.layer !== 'typed') continue;
      const key = `${r.c.module}.${r.c.fn}`;
      const params = signatures.get(r.c.module)!.get(r.c.fn)!;
      const blamed = params.findIndex((p) => new RegExp(`^${escape(r.c.fn)}: ${escape(p.name)}(?![\\w$])`).test(r.detail.replace(/^\w+: /, '')));
      if (blamed < 0 || blamed === r.c.position) continue;
      const choice = choices.get(key) ?? params.map(() => 0);
      if (!bumped.has(`${key}#${blamed}`)) {
        choice[blamed]++;
        bumped.add(`${key}#${blamed}`);
        choices.set(key, choice);
      }
    }
    for (const r of results.values()) {
      if (r.outcome !== 'misattributed' || r.c.layer !== 'typed') continue;
      const choice = choices.get(`${r.c.module}.${r.c.fn}`);
      if (!choice) continue;
      const again = withNeutrals(r.c, signatures.get(r.c.module)!.get(r.c.fn)!, choice);
      if (again && JSON.stringify(again.args) !== JSON.stringify(r.c.args)) retry.push(again);
    }
    if (!retry.length) break;
    log(`fuzz: retrying ${retry.length} misattributed cases with other neutral values (round ${round + 1})`);
    await execute(retry);
  }

  for (const r of results.values()) {
    const counts = report[r.c.layer];
    if (r.outcome === 'rejected') counts.rejected++;
    else {
      report.failures.push(r);
      if (r.outcome === 'crash' || r.outcome === 'timeout') counts.crashes++;
      else counts[r.outcome]++;
    }
  }
  report.failures.sort((a, b) => a.c.id - b.c.id);
  report.seconds = (Date.now() - started) / 1000;
  return report;
}
