// `npm run setup` (scripts/quickstart.sh) stops at a wrong CUDA_TOOLKIT with what is wrong and the fix,
// before generating anything. Needs clang 19+ and node_modules (the steps before the toolkit's check).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = join(__dirname, '..', '..');
const work = mkdtempSync(join(tmpdir(), 'cuda-ts-quickstart-'));
const clang19 = spawnSync('bash', ['-c', '. scripts/clang-version.sh && has_clang19'], { cwd: root }).status === 0;

function setup(toolkit: string): { status: number | null; stderr: string } {
  const r = spawnSync('bash', ['scripts/quickstart.sh'], { cwd: root, env: { ...process.env, CUDA_TOOLKIT: toolkit, TMPDIR: work }, encoding: 'utf8' });
  return { status: r.status, stderr: r.stderr };
}

(clang19 ? describe : describe.skip)(
  `npm run setup with a wrong CUDA_TOOLKIT${clang19 ? '' : ' — skipped: clang 19 or newer is not installed (setup would install it first)'}`,
  () => {
    test('a file is reported as a file, not as missing', () => {
      const file = join(work, 'cuda.tar.gz');
      writeFileSync(file, 'not a folder\n');
      expect(setup(file)).toEqual({
        status: 1,
        stderr: expect.stringMatching(
          /^setup failed: CUDA_TOOLKIT=.*cuda\.tar\.gz is a file, not a folder\n {2}fix: set CUDA_TOOLKIT to a CUDA toolkit folder/,
        ),
      });
    });

    test('a missing path is reported as missing', () => {
      expect(setup(join(work, 'nope'))).toEqual({ status: 1, stderr: expect.stringMatching(/^setup failed: CUDA_TOOLKIT=.*nope does not exist\n/) });
    });

    test('a folder without include/cuda.h says so', () => {
      expect(setup(work)).toEqual({
        status: 1,
        stderr: expect.stringMatching(/has no include\/cuda\.h\n {2}fix: set CUDA_TOOLKIT to the toolkit's top folder/),
      });
    });
  },
);
