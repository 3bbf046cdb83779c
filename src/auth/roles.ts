/** The three roles, ordered: each includes what the ones before it may do. */
import type { Role } from '../store/access.js';

export type { Role } from '../store/access.js';
export { ROLES } from '../store/access.js';

const RANK: Readonly<Record<Role, number>> = { viewer: 1, operator: 2, admin: 3 };

/** True when `have` includes everything `need` may do. */
export function roleAtLeast(have: Role, need: Role): boolean {
  return RANK[have] >= RANK[need];
}

/** True for the three role names. */
export function isRole(value: unknown): value is Role {
  return value === 'viewer' || value === 'operator' || value === 'admin';
}
