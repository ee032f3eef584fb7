// What the emitters of one module are handed: built once per module by emitModule (./index.ts).
import type { FunctionSem, ModuleOverrides } from '../semantics';
import type { EmitContext } from './raw';

export interface ModuleEmitContext extends EmitContext {
  /** The parameter semantics of every function, in IR order: resolved once per module, read by the typed
   *  layer and by the `signatures.txt` listing (so the two never disagree). */
  semantics: FunctionSem[];
  /** The override table the semantics were resolved with: its attribute tables type attribute values. */
  overrides: ModuleOverrides;
}
