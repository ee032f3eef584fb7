// src/device-properties.ts is produced by scripts/device-properties.ts from the driver IR: the committed
// file must be exactly what the script writes (run `npm run gen:device-properties` after changing either).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { OUTPUT, deviceProperties, properties } from '../scripts/device-properties';

const ROOT = join(__dirname, '..');

test('src/device-properties.ts is what scripts/device-properties.ts writes from the IR', () => {
  expect(readFileSync(join(ROOT, OUTPUT), 'utf8')).toBe(deviceProperties(ROOT));
});

test('the table has one property per attribute value, camel-cased, newer ones optional', () => {
  const props = properties(ROOT);
  expect(props.length).toBeGreaterThan(100);
  expect(new Set(props.map((p) => p.value)).size).toBe(props.length);
  expect(props.find((p) => p.enumerator === 'CU_DEVICE_ATTRIBUTE_WARP_SIZE')).toMatchObject({ name: 'warpSize', value: 10, old: true });
  expect(props.find((p) => p.enumerator === 'CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_WIDTH')?.name).toBe('maximumTexture2dLayeredWidth');
  expect(props.some((p) => p.enumerator === 'CU_DEVICE_ATTRIBUTE_MAX')).toBe(false);
  expect(props.filter((p) => !p.old).length).toBeGreaterThan(0);
});
