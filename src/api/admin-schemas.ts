import { Type } from 'typebox';
import { pageQuery } from '../http/schemas.js';
import { AUDIT_ACTIONS } from '../services/audit.js';
import { PASSWORD_MAX, PASSWORD_MIN } from '../services/people/passwords.js';
import { Name } from './accounts.js';

// The request and response schemas of the administration routes (api/admin.ts).

const ROLES = ['owner', 'admin', 'member', 'viewer'] as const;
const Role = Type.Enum([...ROLES]);
const Id = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_]+$' });

export const MemberSchema = Type.Object({
  object: Type.Literal('member'),
  user_id: Type.String(),
  email: Type.String(),
  name: Type.String(),
  role: Role,
  created: Type.String(),
});
export const InvitationSchema = Type.Object({
  id: Type.String(),
  object: Type.Literal('invitation'),
  org_id: Type.String(),
  email: Type.String(),
  role: Role,
  status: Type.Enum(['pending', 'accepted', 'revoked', 'expired']),
  created_by: Type.Optional(Type.String()),
  created: Type.String(),
  expires: Type.String(),
  accepted: Type.Optional(Type.String()),
  revoked: Type.Optional(Type.String()),
  /** The one-time link (https://…/app/invite#token=…): only in the answer that makes it. */
  url: Type.Optional(Type.String()),
});
export const AuditSchema = Type.Object({
  id: Type.String(),
  object: Type.Literal('audit_record'),
  org_id: Type.Optional(Type.String()),
  project_id: Type.Optional(Type.String()),
  /** One of the actions `action` filters by (auth.sign_in, key.created, member.role_changed, …). */
  action: Type.String(),
  actor: Type.Object({ type: Type.Enum(['user', 'key', 'anonymous', 'system']), id: Type.Optional(Type.String()) }),
  target: Type.Optional(Type.Object({ type: Type.String(), id: Type.Optional(Type.String()) })),
  /** What changed (names, roles, from/to); never a secret. */
  details: Type.Record(Type.String(), Type.Unknown()),
  ip: Type.Optional(Type.String()),
  created: Type.String(),
});

export const NameBody = Type.Object({ name: Name(200) }, { additionalProperties: false });
export const ConfirmBody = Type.Object(
  { confirm: Type.Optional(Type.String({ maxLength: 400 })) },
  { additionalProperties: false },
);
export const ProjectParams = Type.Object({ id: Id, project_id: Id });
export const MemberParams = Type.Object({ id: Id, user_id: Id });
export const InvitationParams = Type.Object({ id: Id, invitation_id: Id });
export const RoleBody = Type.Object({ role: Role }, { additionalProperties: false });
export const InvitationBody = Type.Object(
  { email: Type.String({ format: 'email', maxLength: 254 }), role: Role },
  { additionalProperties: false },
);
export const AcceptBody = Type.Object(
  {
    token: Type.String({ minLength: 1, maxLength: 100 }),
    name: Type.Optional(Name(200)),
    password: Type.Optional(Type.String({ minLength: PASSWORD_MIN, maxLength: PASSWORD_MAX })),
  },
  { additionalProperties: false },
);
export const AuditQuery = pageQuery(50, {
  action: Type.Optional(Type.Enum([...AUDIT_ACTIONS])),
  actor: Type.Optional(Id),
  created_after: Type.Optional(Type.String({ format: 'date-time' })),
  created_before: Type.Optional(Type.String({ format: 'date-time' })),
});
