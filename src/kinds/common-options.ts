import { Type } from 'typebox';
import type { ErrorDetail } from '../errors.js';
import { POSITIONS, qualityToNumber, type QualityLevel } from '../media/index.js';

// Option schemas shared by the transform kinds (reference.md 2.2–2.4, Decisions 4).

export const Dimension = Type.Integer({ minimum: 1, maximum: 8192 });
export const Seconds = Type.Number({ minimum: 0, maximum: 86_400 });
export const Hex = Type.String({ pattern: '^#([0-9a-fA-F]{6}|[0-9a-fA-F]{8})$' });
export const PositionOption = Type.Enum([...POSITIONS]);
const QUALITY_NAMES: QualityLevel[] = ['very_low', 'low', 'medium', 'high', 'very_high'];
/** An integer 1–100 or one of the named levels. */
export const QualityOption = Type.Union([Type.Integer({ minimum: 1, maximum: 100 }), Type.Enum(QUALITY_NAMES)]);

export function qualityOf(value: number | QualityLevel | undefined, fallback: number): number {
  return value === undefined ? fallback : qualityToNumber(value);
}

/** end must come after start when both are given. */
export function trimProblems(opts: { start?: number; end?: number }): ErrorDetail[] {
  return opts.start !== undefined && opts.end !== undefined && opts.end <= opts.start
    ? [{ field: 'end', message: 'must be greater than start' }]
    : [];
}
