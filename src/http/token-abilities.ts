// Checks the abilities of a token about to be created (admin API and dashboard alike): each must be well formed,
// and a site-specific one must name a site of the token's own account.

import type { FieldErrorCollector } from '../domain/errors.js';
import { abilityProblem } from '../domain/scopes.js';
import type { MetaStore } from '../store/types.js';

export async function checkAbilities(
  meta: MetaStore,
  accountId: number,
  abilities: readonly string[],
  errors: FieldErrorCollector,
): Promise<void> {
  for (const ability of abilities) {
    const problem = abilityProblem(ability);
    if (problem) {
      errors.add('abilities', problem);
      continue;
    }
    const siteId = ability.split(':')[1];
    if (siteId) {
      const site = await meta.getSite(siteId);
      if (!site || site.accountId !== accountId) errors.add('abilities', `site ${siteId} is not a site of this account`);
    }
  }
}
