// Lists every typed-layer parameter whose direction or shape rests on a name rule or a default rather
// than a fact (an explicit [in]/[out] or cue word in the header docs, const, a reviewed override): the
// review list for the parameter-semantics model. Each line: `function.parameter: role — why`.
//
//   tsx scripts/semantics-guesses.ts [--release 13.0] [--summary] [--only <guess words>] [module …]
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseIR } from '../generator/ir/store';
import { findModule } from '../generator/modules';
import { TypeModel } from '../generator/model';
import { guessedParams, resolveModule, type GuessedParam } from '../generator/semantics';

interface Options {
  release: string;
  summary: boolean;
  only?: string;
  modules: string[];
}

function parseArgs(argv: string[]): Options {
  const o: Options = { release: '13.0', summary: false, modules: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--release') o.release = argv[++i];
    else if (a === '--summary') o.summary = true;
    else if (a === '--only') o.only = argv[++i];
    else o.modules.push(a);
  }
  return o;
}

function guessesOf(root: string, release: string, module: string): GuessedParam[] {
  const path = join(root, 'headers', release, `${module}.json`);
  const spec = findModule(module);
  if (!spec) throw new Error(`unknown module ${module}`);
  return guessedParams(resolveModule(new TypeModel(parseIR(readFileSync(path, 'utf8'), path), spec)));
}

function main(): void {
  const o = parseArgs(process.argv.slice(2));
  const root = join(__dirname, '..');
  const modules = o.modules.length
    ? o.modules
    : readdirSync(join(root, 'headers', o.release))
        .filter((f) => f.endsWith('.json'))
        .map((f) => f.slice(0, -5));
  for (const m of modules) {
    const list = guessesOf(root, o.release, m).filter((g) => !o.only || g.guess.includes(o.only));
    const byGuess = new Map<string, number>();
    for (const g of list) byGuess.set(g.guess, (byGuess.get(g.guess) ?? 0) + 1);
    console.log(`# ${m} ${o.release}: ${list.length} guessed parameters in ${new Set(list.map((g) => g.fn)).size} functions`);
    for (const [guess, n] of byGuess) console.log(`#   ${n} × ${guess}`);
    if (!o.summary) for (const g of list) console.log(`${g.fn}.${g.param}: ${g.role} — ${g.guess}`);
  }
}

main();
