// The Doxygen group of a header line (generator/parse/groups.ts), on a synthetic header: only
// identifiers of groups are read, never their titles.
import { groupLines } from '../../generator/parse/groups';

const HEADER = [
  '/**', // 1
  ' * \\defgroup OUTER Outer', // 2
  ' * @{', // 3
  ' */', // 4
  'int a(void);', // 5
  '/** \\addtogroup INNER', // 6
  ' * @{ */', // 7
  'int b(void);', // 8
  '/** @} */', // 9
  'int c(void);', // 10
  '/** @} */', // 11
  'int d(void);', // 12
  '/** \\defgroup NOBRACES Title */', // 13
  '/**', // 14
  ' * \\ingroup NOBRACES', // 15
  ' */', // 16
  'int e(int x,', // 17
  '      int y);', // 18
  'int f(void);', // 19
].join('\n');

describe('groupLines', () => {
  const at = groupLines(HEADER);
  it('puts each declaration in its innermost open group', () => {
    expect([at(5), at(8), at(10), at(12)]).toEqual(['OUTER', 'INNER', 'OUTER', undefined]);
  });
  it('places a declaration after \\ingroup up to its semicolon, and nothing after', () => {
    expect([at(17), at(18), at(19)]).toEqual(['NOBRACES', 'NOBRACES', undefined]);
  });
  it('knows no group outside the text', () => {
    expect(at(0)).toBeUndefined();
    expect(at(99)).toBeUndefined();
  });
});
