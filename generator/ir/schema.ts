// The intermediate representation: facts extracted from a CUDA release's headers (names, C types,
// values, layouts), never header prose. Validated by zod when written and when read.
import { z } from 'zod';

/** A C type as a tree. `const` qualifies the level it sits on. */
export type CType =
  | { kind: 'builtin'; name: string; const?: boolean }
  | { kind: 'named'; name: string; const?: boolean } // typedef name, or `struct X` / `union X` / `enum X`
  | { kind: 'pointer'; to: CType; const?: boolean }
  | { kind: 'array'; of: CType; length: number; const?: boolean }
  | { kind: 'function'; returns: CType; params: CType[]; variadic?: boolean; const?: boolean };

export const CTypeSchema: z.ZodType<CType> = z.lazy(() =>
  z.discriminatedUnion('kind', [
    z.object({ kind: z.literal('builtin'), name: z.string(), const: z.boolean().optional() }),
    z.object({ kind: z.literal('named'), name: z.string(), const: z.boolean().optional() }),
    z.object({ kind: z.literal('pointer'), to: CTypeSchema, const: z.boolean().optional() }),
    z.object({ kind: z.literal('array'), of: CTypeSchema, length: z.number().int().nonnegative(), const: z.boolean().optional() }),
    z.object({
      kind: z.literal('function'),
      returns: CTypeSchema,
      params: z.array(CTypeSchema),
      variadic: z.boolean().optional(),
      const: z.boolean().optional(),
    }),
  ]),
);

/** What a parameter's header documentation says, reduced to facts: an explicit direction
 *  (an `[out]` on its param command) and cue words from a fixed vocabulary. The prose is never stored. */
export const ParamDocSchema = z.object({
  dir: z.enum(['in', 'out', 'inout']).optional(),
  cues: z.array(z.enum(['returns', 'input', 'inout', 'array', 'count', 'optional'])),
});

export const ParamSchema = z.object({ name: z.string(), type: CTypeSchema, doc: ParamDocSchema.optional() });

export const FunctionSchema = z.object({
  /** User-facing name (`cuMemAlloc`). */
  name: z.string(),
  /** Exported symbol (`cuMemAlloc_v2`). */
  symbol: z.string(),
  /** Symbol of the per-thread-default-stream variant, when the header declares one. */
  ptdsSymbol: z.string().optional(),
  /** How cuGetProcAddress names this exact ABI: base name and the CUDA version it appeared in
   *  (`cuMemAlloc_v2` → `cuMemAlloc` at 3020), and the version of its per-thread variant. */
  proc: z.object({ name: z.string(), version: z.number().int(), ptdsVersion: z.number().int().optional() }).optional(),
  /** The CUDA version (13000 style) that introduced this name, where the headers state it: the driver's
   *  oldest `PFN_<name>_v<N>` typedef (cudaTypedefs.h). Absent where no header says (the docs then give
   *  bounds from the stored releases). */
  introduced: z.number().int().optional(),
  returns: CTypeSchema,
  params: z.array(ParamSchema),
  variadic: z.boolean(),
  header: z.string(),
  /** The Doxygen group the header declares it in (`CUDA_MEM`): an identifier, never its title. */
  group: z.string().optional(),
  /** The declaration is marked deprecated: a deprecation attribute (`__CUDA_DEPRECATED` and friends), a
   *  deprecation macro on the declaration (`CUDNN_DEPRECATED`, NVML's `DEPRECATED(13.0)`, even where the
   *  macro expands to nothing) or a Doxygen `\deprecated` command. */
  deprecated: z.literal(true).optional(),
  /** The release the marker names (`DEPRECATED(13.0)` → "13.0"), when it names one. */
  deprecatedIn: z
    .string()
    .regex(/^\d+\.\d+$/)
    .optional(),
});

export const EnumSchema = z.object({
  name: z.string(), // typedef name when there is one, else `enum tag`
  tag: z.string().optional(),
  /** Bytes and signedness of the underlying integer. */
  size: z.number().int(),
  signed: z.boolean(),
  /** Values as decimal strings: exact beyond 2^53. */
  members: z.array(z.object({ name: z.string(), value: z.string() })),
  header: z.string(),
});

export const FieldSchema = z.object({
  name: z.string(),
  type: CTypeSchema,
  offset: z.number().int().nonnegative(),
  /** Present for bitfields: width and offset in bits from the record start. */
  bitWidth: z.number().int().optional(),
  bitOffset: z.number().int().optional(),
});

export const RecordSchema = z.object({
  /** `struct X`, `union X`, or a synthesized name for anonymous records (`Outer::field`). */
  name: z.string(),
  kind: z.enum(['struct', 'union']),
  size: z.number().int().nonnegative(),
  align: z.number().int().positive(),
  fields: z.array(FieldSchema),
  header: z.string(),
});

export const TypedefSchema = z.object({ name: z.string(), type: CTypeSchema, header: z.string() });

export const ConstantSchema = z.object({
  name: z.string(),
  kind: z.enum(['int', 'float', 'pointer']),
  /** Decimal text (hex for pointers): exact beyond 2^53. */
  value: z.string(),
  /** For pointer-valued constants, the type cast to (`CUstream`, `void *`). */
  type: z.string().optional(),
});

export const ModuleIRSchema = z.object({
  irVersion: z.literal(1),
  module: z.string(),
  cudaVersion: z.string(), // "13.0"
  /** CUDA_VERSION / CUDART_VERSION style integer (13000). */
  versionNumber: z.number().int(),
  /** The release of this module's own headers when it differs from the toolkit's (`cudaVersion`), e.g. a
   *  newer nvJitLink wheel in a 13.0 wheel set: "13.4". Absent when they agree. */
  componentVersion: z
    .string()
    .regex(/^\d+\.\d+$/)
    .optional(),
  functions: z.array(FunctionSchema),
  enums: z.array(EnumSchema),
  records: z.array(RecordSchema),
  typedefs: z.array(TypedefSchema),
  /** Typedefs naming a pointer to an incomplete struct: handles. */
  opaque: z.array(z.string()),
  constants: z.array(ConstantSchema),
  /** User-facing alias → function name (`cuGraphInstantiate` → `cuGraphInstantiateWithFlags`). */
  aliases: z.record(z.string(), z.string()),
});

export type Param = z.infer<typeof ParamSchema>;
export type ParamDoc = z.infer<typeof ParamDocSchema>;
export type FunctionDecl = z.infer<typeof FunctionSchema>;
export type EnumDecl = z.infer<typeof EnumSchema>;
export type RecordDecl = z.infer<typeof RecordSchema>;
export type Field = z.infer<typeof FieldSchema>;
export type TypedefDecl = z.infer<typeof TypedefSchema>;
export type Constant = z.infer<typeof ConstantSchema>;
export type ModuleIR = z.infer<typeof ModuleIRSchema>;
