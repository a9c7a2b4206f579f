// A condition as workflows and automation triggers write it (reference.md Decisions 7).

export const CONDITION_OPS = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'contains', 'exists'] as const;
export type ConditionOp = (typeof CONDITION_OPS)[number];

export interface Condition {
  prop: string;
  value?: unknown;
  op?: ConditionOp;
}
