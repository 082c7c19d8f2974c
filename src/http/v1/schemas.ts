// JSON schemas of the /v1 routes: they validate requests and generate the OpenAPI document (/openapi.json).

import { CURRENCIES } from '../../store/types.js';

const timestamp = { type: 'string', description: 'UTC, `YYYY-MM-DD HH:MM:SS`', examples: ['2026-01-31 13:45:00'] } as const;
const nullableTimestamp = { type: ['string', 'null'], description: timestamp.description } as const;

export const siteIdParams = {
  type: 'object',
  properties: { site_id: { type: 'string', description: 'The site id (its tracking code)' } },
  required: ['site_id'],
} as const;
export const eventIdParams = {
  type: 'object',
  properties: { ...siteIdParams.properties, event_id: { type: 'string', description: "The event's tracking code" } },
  required: ['site_id', 'event_id'],
} as const;
export const milestoneIdParams = {
  type: 'object',
  properties: { ...siteIdParams.properties, milestone_id: { type: 'string', format: 'uuid' } },
  required: ['site_id', 'milestone_id'],
} as const;

export const paginationQuery = {
  type: 'object',
  properties: {
    limit: { type: 'integer', minimum: 1, maximum: 100, default: 10, description: 'Items per page' },
    starting_after: { type: 'string', description: 'Id of an object: the page after it' },
    ending_before: { type: 'string', description: 'Id of an object: the page before it' },
  },
} as const;

export interface PaginationQuery {
  limit: number;
  starting_after?: string;
  ending_before?: string;
}

const listOf = (item: object) =>
  ({
    type: 'object',
    properties: {
      object: { type: 'string', enum: ['list'] },
      url: { type: 'string' },
      has_more: { type: 'boolean' },
      data: { type: 'array', items: item },
    },
    required: ['object', 'url', 'has_more', 'data'],
  }) as const;

export const deletedObject = {
  type: 'object',
  properties: { id: { type: 'string' }, object: { type: 'string' }, deleted: { type: 'boolean' } },
  required: ['id', 'object', 'deleted'],
} as const;

export const accountObject = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    object: { type: 'string', enum: ['account'] },
    name: { type: 'string' },
    email: { type: 'string' },
  },
  required: ['id', 'object', 'name', 'email'],
} as const;

export const tokenObject = {
  type: 'object',
  properties: {
    object: { type: 'string', enum: ['token'] },
    name: { type: 'string' },
    version: { type: 'integer' },
    abilities: { type: 'array', items: { type: 'string' } },
    last_used_at: nullableTimestamp,
    expires_at: nullableTimestamp,
    created_at: timestamp,
    updated_at: timestamp,
  },
  required: ['name', 'version', 'abilities', 'last_used_at', 'expires_at', 'created_at', 'updated_at'],
} as const;

export const siteObject = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    object: { type: 'string', enum: ['site'] },
    name: { type: 'string' },
    sharing: { type: 'string', enum: ['none', 'private', 'public'] },
    created_at: timestamp,
    timezone: { type: 'string' },
    multi_domain: { type: 'boolean' },
    multi_domain_option: { type: ['string', 'null'], enum: ['combined', 'separate', null] },
    domain: { type: ['string', 'null'], description: "Extension: the site's hostnames, comma-separated (Plausible's data-domain)" },
    umami_website_id: { type: ['string', 'null'], description: 'Extension: the Umami website UUID the site answers to' },
    plausible_script_id: {
      type: ['string', 'null'],
      description: "Extension: the id of Plausible's per-site script (/js/pa-<id>.js) the site answers to",
    },
  },
  required: ['id', 'object', 'name', 'sharing', 'created_at', 'timezone', 'multi_domain', 'multi_domain_option'],
} as const;

export const eventObject = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    object: { type: 'string', enum: ['event'] },
    name: { type: 'string' },
    currency: { type: ['string', 'null'], description: 'Set only in create and update responses' },
    created_at: timestamp,
  },
  required: ['id', 'object', 'name', 'currency', 'created_at'],
} as const;

export const milestoneObject = {
  type: 'object',
  properties: {
    id: { type: 'string', format: 'uuid' },
    object: { type: 'string', enum: ['milestone'] },
    name: { type: 'string' },
    milestone_date: { ...timestamp, description: 'The date, with time 00:00:00' },
    created_at: timestamp,
    updated_at: timestamp,
  },
  required: ['id', 'object', 'name', 'milestone_date', 'created_at', 'updated_at'],
} as const;

export const siteList = listOf(siteObject);
export const eventList = listOf(eventObject);
export const milestoneList = listOf(milestoneObject);

const name255 = { type: 'string', minLength: 1, maxLength: 255 } as const;

const siteBodyProperties = {
  name: name255,
  sharing: { type: 'string', enum: ['none', 'private', 'public'] },
  share_password: { type: 'string', minLength: 1, maxLength: 255, description: "Required with sharing 'private'" },
  timezone: { type: 'string', maxLength: 64, description: 'TZ database name; defaults to the account time zone' },
  multi_domain: { type: 'boolean' },
  multi_domain_option: {
    type: 'string',
    enum: ['combined', 'separate'],
    description: 'Required with multi_domain true',
  },
  domain: {
    type: ['string', 'null'],
    maxLength: 2048,
    description: "Extension: the site's hostnames, comma-separated, each naming this site only; null or '' removes them",
    examples: ['example.com,www.example.com'],
  },
  umami_website_id: {
    type: ['string', 'null'],
    maxLength: 64,
    description: "Extension: the Umami website UUID of the site's existing Umami tags; null or '' removes it",
  },
  plausible_script_id: {
    type: ['string', 'null'],
    maxLength: 512,
    description:
      "Extension: the id of the site's Plausible script (the <id> of /js/pa-<id>.js in Plausible's snippet; pa-<id>.js or the script's URL are taken too); null or '' removes it",
    examples: ['gYyxvZhkMzdzXBAtSeSNz'],
  },
} as const;

export const siteCreateBody = { type: 'object', properties: siteBodyProperties, required: ['name'] } as const;
export const siteUpdateBody = { type: 'object', properties: siteBodyProperties } as const;

const eventBodyProperties = {
  name: name255,
  currency: { type: 'string', enum: [...CURRENCIES], description: 'Defaults to dollar' },
} as const;
export const eventCreateBody = { type: 'object', properties: eventBodyProperties, required: ['name'] } as const;
export const eventUpdateBody = { type: 'object', properties: eventBodyProperties } as const;

export const milestoneBody = {
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 30 },
    milestone_date: { type: 'string', maxLength: 10, description: '`YYYY-MM-DD`', examples: ['2026-03-01'] },
  },
  required: ['name', 'milestone_date'],
} as const;

/** GET /v1/sites/{site_id}/journeys (a Plumb extension): its query and answer (docs/reports.md, "Journeys"). */
export const journeysQuerySchema = {
  type: 'object',
  properties: {
    date_from: { type: 'string', description: 'First second counted, in any form /v1/aggregations accepts (default: the first pageview)' },
    date_to: { type: 'string', description: 'Last second counted (inclusive), in any form /v1/aggregations accepts (default: now)' },
    timezone: { type: 'string', description: "TZ database name overriding the site's time zone, as in /v1/aggregations" },
    filters: { type: 'string', description: "/v1/aggregations's filters (JSON or nested): a visit counts when one of its pageviews in range passes them" },
    entry_page: { type: 'string', description: 'Only journeys whose first page is this exact pathname (at most 2,000 characters)' },
    steps: { type: 'string', description: 'Deepest prefix listed: 2 to 5 (default 3)' },
    limit: { type: 'string', description: 'Prefixes listed per depth: 1 to 100 (default 10)' },
  },
} as const;

export const journeysAnswer = {
  type: 'object',
  properties: {
    date_from: { type: 'string', description: 'First second counted, local `YYYY-MM-DD HH:MM:SS` in the reporting zone' },
    date_to: { type: 'string', description: 'Last second counted (inclusive), local `YYYY-MM-DD HH:MM:SS` in the reporting zone' },
    entry_page: { type: ['string', 'null'], description: 'The entry page asked for, null for any' },
    steps: { type: 'integer' },
    total_visits: { type: 'string', description: 'Journeys counted (visits with a pageview in range passing the filters)' },
    paths: {
      type: 'array',
      description: 'Depth 1 to steps, then visits descending, then pages ascending',
      items: {
        type: 'object',
        properties: {
          pages: { type: 'array', items: { type: 'string' } },
          visits: { type: 'string', description: 'Journeys starting with exactly these pages' },
          ended: { type: 'string', description: 'Of those, journeys of exactly these pages (they ended here)' },
        },
        required: ['pages', 'visits', 'ended'],
      },
    },
  },
  required: ['date_from', 'date_to', 'entry_page', 'steps', 'total_visits', 'paths'],
} as const;
