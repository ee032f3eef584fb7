// The parameter-semantics model: for every parameter of every function, what the typed layer does
// with it — its direction, whether it is an array and what gives its length, capacity/count pairs,
// string buffers, attribute-typed values, versioned structs, nullability and pointers the library keeps.
// Resolved from facts in this order: a reviewed override (with its reason), the header documentation
// (explicit [in]/[out] and cue words stored in the IR), then C semantics (const, pointer depth, pointee).
import { z } from 'zod';

/** Scalar element of a value, array or out-parameter, as the typed layer reads and checks it. */
export const ElemSchema = z.discriminatedUnion('t', [
  z.object({
    t: z.literal('int'),
    bits: z.union([z.literal(8), z.literal(16), z.literal(32), z.literal(64)]),
    signed: z.boolean(),
    size: z.boolean().optional(),
    brand: z.string().optional(),
  }),
  z.object({ t: z.literal('float'), bits: z.union([z.literal(32), z.literal(64)]) }),
  z.object({ t: z.literal('bool') }),
  z.object({ t: z.literal('enum'), name: z.string(), bits: z.number().int(), signed: z.boolean() }),
  z.object({ t: z.literal('handle'), name: z.string() }),
  z.object({ t: z.literal('deviceptr'), name: z.string() }),
  z.object({ t: z.literal('address') }), // `void *` value (an address to pass on)
  z.object({ t: z.literal('cstring') }), // `const char *` read from a returned address
  z.object({ t: z.literal('record'), name: z.string(), size: z.number().int() }),
]);
export type Elem = z.infer<typeof ElemSchema>;

/** Where a fact came from: `override` (reviewed table, with reason), `doc` (header docs), `c` (C types). */
export const SourceSchema = z.enum(['override', 'doc', 'c']);

/** Where the memory behind a pointer lives: `device` (a device address: DeviceBuffer, view, number),
 *  `host` (a typed array or host address), `either` (the library takes both: cuBLAS's pointer mode). */
export const SpaceSchema = z.enum(['device', 'host', 'either']);
export type Space = z.infer<typeof SpaceSchema>;
/** What the call does with the pointee: reads it, writes it, or both. */
export const DirSchema = z.enum(['in', 'out', 'inout']);
export type Dir = z.infer<typeof DirSchema>;

/** Which parameter sizes a pointer's memory, in elements or bytes; the element's C type when known
 *  (`elem`), or the parameter whose value picks it (`typeParam`: a cudaDataType, ncclDataType_t). */
export const PointerCountSchema = z.object({
  param: z.string(),
  unit: z.enum(['elements', 'bytes']),
  elem: z.string().optional(),
  elemBytes: z.number().int().positive().optional(),
  typeParam: z.string().optional(),
});
export type PointerCount = z.infer<typeof PointerCountSchema>;

/** The C type of a scalar passed by pointer: real, integer, complex, half, or `untyped` (`const void *`
 *  whose type another parameter picks: cublasGemmEx's computeType, cuDNN's tensor data type). */
export const ScalarTypeSchema = z.enum(['f16', 'bf16', 'f32', 'f64', 'c64', 'c128', 'i8', 'u8', 'i32', 'u32', 'i64', 'u64', 'untyped']);
export type ScalarType = z.infer<typeof ScalarTypeSchema>;

export const SemSchema = z.discriminatedUnion('role', [
  /** Passed by value: integer, float, enum, handle, device pointer, bool. */
  z.object({ role: z.literal('value'), elem: ElemSchema }),
  /** A record passed by value. */
  z.object({ role: z.literal('recordValue'), record: z.string() }),
  /** A C function pointer: a koffi-registered callback (or a JS function for one-shot callbacks). */
  z.object({ role: z.literal('callback'), nullable: z.boolean() }),
  /** `const char *` in. */
  z.object({ role: z.literal('string'), nullable: z.boolean() }),
  /** Memory the caller owns, passed as an address or a host buffer; `size` names the parameter
   *  holding the byte count the call touches (a host buffer must cover it); `retained`: the library
   *  keeps the pointer past the call (the caller keeps the memory alive). */
  z.object({
    role: z.literal('pointer'),
    nullable: z.boolean(),
    size: z.string().optional(),
    retained: z.boolean().optional(),
    /** The pointee's direction: const ⇒ in; non-const ⇒ out (documented [out]) or inout. */
    dir: DirSchema.optional(),
    /** Where the memory lives (reviewed overrides per family); absent: not known (address or host buffer). */
    space: SpaceSchema.optional(),
    /** Which parameter counts the memory, and in which unit (reviewed overrides). */
    count: PointerCountSchema.optional(),
    /** null is documented (the header's `optional`, or an override), not only accepted. */
    nullFact: z.boolean().optional(),
  }),
  /** A scalar passed by pointer (alpha, beta): the value itself (boxed into the function's Scratch),
   *  a host buffer holding it, or `{ ptr }` device memory; never a number taken as an address. */
  z.object({ role: z.literal('scalar'), type: ScalarTypeSchema, space: SpaceSchema }),
  /** An array of results the call fills, sized by the input `capacity` (allocated that many) and
   *  returned with the length the call writes to the out-parameter `count`. */
  z.object({ role: z.literal('resultArray'), elem: ElemSchema, capacity: z.string(), count: z.string() }),
  /** A count the call writes that the typed layer reads itself (a result array's length, an attribute's
   *  size written): not returned. */
  z.object({ role: z.literal('countOut'), of: z.string(), elem: ElemSchema }),
  /** The byte size of the attribute value `of`: derived from the attribute (not a parameter of the typed function). */
  z.object({ role: z.literal('attrSize'), of: z.string() }),
  /** One record in (`const T *`): a record object, or bytes already encoded. */
  z.object({ role: z.literal('inRecord'), record: z.string(), nullable: z.boolean() }),
  /** An array in: a typed array or JS array; `count` names the parameter derived from its length;
   *  `inout`: the call also writes the elements, and the typed layer returns them. */
  z.object({ role: z.literal('inArray'), elem: ElemSchema, count: z.string().optional(), nullable: z.boolean(), inout: z.boolean().optional() }),
  /** A count derived from the length of the arrays named in `of` (not a parameter of the typed function). */
  z.object({ role: z.literal('count'), of: z.array(z.string()) }),
  /** A scalar returned through a pointer; `unit`: what a returned size counts (a reviewed fact). */
  z.object({ role: z.literal('out'), elem: ElemSchema, unit: z.enum(['elements', 'bytes']).optional() }),
  /** A scalar taken and returned through a pointer. */
  z.object({ role: z.literal('inout'), elem: ElemSchema }),
  /** A record returned through a pointer; `version`: the value stamped into its `version` field. */
  z.object({ role: z.literal('outRecord'), record: z.string(), version: z.number().int().optional() }),
  /** A record taken (optional fields) and returned; `version` stamped as for outRecord. */
  z.object({ role: z.literal('inoutRecord'), record: z.string(), version: z.number().int().optional() }),
  /** A text buffer the library fills; `length` names the parameter giving its capacity in bytes (an
   *  input), or, with `capacity`, the in/out length pointer the typed layer fills with `capacity`; a
   *  number is a fixed capacity the API documents (nvmlDeviceGetGspFirmwareVersion's 64 bytes). */
  z.object({ role: z.literal('outText'), length: z.union([z.string(), z.number().int().positive()]), capacity: z.number().int().optional() }),
  /** An array the library fills; `count` names the input giving how many elements, or is the fixed
   *  element count the API documents (cuDeviceGetLuid's 8 bytes). */
  z.object({ role: z.literal('outArray'), elem: ElemSchema, count: z.union([z.string(), z.number().int().positive()]) }),
  /** An array the library fills, whose length is the in/out capacity/count parameter `count`
   *  (asked first with a null array, then filled: the caller never passes a capacity). */
  z.object({ role: z.literal('capacityArray'), elem: ElemSchema, count: z.string() }),
  /** The capacity-in/count-out of `of` (not a parameter of the typed function). */
  z.object({ role: z.literal('capacity'), of: z.array(z.string()), elem: ElemSchema }),
  /** A value whose C type is chosen by the attribute parameter `attr` (table in the overrides);
   *  `dir`: returned (`out`) or taken (`in`). */
  z.object({ role: z.literal('attrValue'), attr: z.string(), dir: z.enum(['in', 'out']), table: z.string() }),
]);
export type Sem = z.infer<typeof SemSchema>;

/** `guess`: the role rests on a name or a default, not on a fact (listed by `guessedParams` for review). */
export const ParamSemSchema = z.object({ name: z.string(), sem: SemSchema, source: SourceSchema, reason: z.string().optional(), guess: z.string().optional() });
export type ParamSem = z.infer<typeof ParamSemSchema>;

export interface FunctionSem {
  name: string;
  params: ParamSem[];
}

/** Value types of an attribute-typed parameter: enum member name → element. */
export type AttrTable = Record<string, Elem>;

/** One reviewed correction: the semantics of `fn.param` and why the facts above did not give it. */
export interface Override {
  sem: Sem;
  reason: string;
}

/** Reviewed facts of a data pointer (merged into its `pointer` role): space, direction, count. */
export interface PointerFacts {
  space?: Space;
  dir?: Dir;
  count?: PointerCount;
  nullable?: boolean;
  reason: string;
}

/** A reviewed scalar-by-pointer parameter: where its value may live, and why it is a scalar. */
export interface ScalarFacts {
  space: Space;
  reason: string;
  /** A pattern key applies to non-const pointers too (the header leaves out the const of an input). */
  nonConst?: boolean;
}

export interface ModuleOverrides {
  /** Keys `function.parameter`; a `*` in either part matches any text (`*.iter`, `cublas*.alpha`):
   *  the exact key wins, then the most specific pattern. */
  params: Record<string, Override>;
  /** Scalars passed by pointer, by the same keys. */
  scalars?: Record<string, ScalarFacts>;
  /** Facts of data pointers (space, direction, count), by the same keys; merged into `pointer` roles. */
  pointers?: Record<string, PointerFacts>;
  /** What a returned size counts (cuSOLVER's Lwork: elements of the data type; cuSPARSE's buffer sizes:
   *  bytes), by the same keys; merged into `out` roles. */
  outUnits?: Record<string, { unit: 'elements' | 'bytes'; reason: string }>;
  /** Attribute → value type tables referenced by `attrValue` semantics. */
  attrTables?: Record<string, { enum: string; values: AttrTable; reason?: string }>;
}
