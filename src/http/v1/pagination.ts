// The pagination query of SPEC.md section 4 as a store page request (rules: DESIGN.md section 5).

import { ValidationError } from '../../domain/errors.js';
import type { PageRequest } from '../../store/types.js';
import type { PaginationQuery } from './schemas.js';

export function pageRequest(query: PaginationQuery): PageRequest {
  if (query.starting_after !== undefined && query.ending_before !== undefined) {
    throw ValidationError.of('ending_before', 'cannot be used together with starting_after');
  }
  return { limit: query.limit, startingAfter: query.starting_after, endingBefore: query.ending_before };
}
