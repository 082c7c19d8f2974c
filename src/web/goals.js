// A site's conversion goals (the API's "events") and milestones: list, add, edit and delete.

import { api, listAll } from './api.js';
import { field, fill, h, main, pageData, select, statusLine } from './dom.js';

const CURRENCIES = ['dollar', 'pound', 'euro', 'yuan', 'peso', 'shekel', 'yen', 'won', 'hryvnia', 'franc', 'rupee', 'integer', 'none'];
const currencyOptions = CURRENCIES.map((c) => [c, c]);

/** A delete button that asks once more in place (no dialogs). */
function deleteButton(what, onConfirm) {
  const button = h('button', { type: 'button', class: 'danger small' }, 'Delete');
  let armed = false;
  button.addEventListener('click', async () => {
    if (!armed) {
      armed = true;
      button.textContent = 'Confirm delete';
      button.setAttribute('aria-label', `Confirm: delete ${what}`);
      return;
    }
    button.disabled = true;
    await onConfirm();
  });
  button.setAttribute('aria-label', `Delete ${what}`);
  return button;
}

function goalsSection(siteId) {
  const section = h('section', { class: 'card', 'aria-labelledby': 'goals-h' });
  const status = statusLine();
  const name = h('input', { name: 'name', required: true, maxlength: 255 });
  const currency = select('currency', currencyOptions, 'dollar');
  const form = h('form', { class: 'row wrap', 'aria-label': 'Add a goal' }, field('Goal name', name), field('Value currency', currency), h('button', { type: 'submit' }, 'Add goal'));
  const list = h('div');
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    try {
      await api('POST', `/v1/sites/${siteId}/events`, { name: name.value, currency: currency.value });
      status.ok(`Added goal ${name.value}.`);
      name.value = '';
      await render();
    } catch (err) {
      status.error(err.message);
    }
  });

  async function render() {
    const goals = await listAll(`/v1/sites/${siteId}/events`);
    if (goals.length === 0) {
      fill(list, h('p', { class: 'muted' }, 'No goals yet.'));
      return;
    }
    fill(list, h('table', {},
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Name'), h('th', { scope: 'col' }, 'Code to send it'), h('th', { scope: 'col' }, 'Actions'))),
      h('tbody', {}, goals.map((g) => goalRow(g)))));
  }

  function goalRow(g) {
    const row = h('tr', { 'data-goal': g.id });
    const view = () =>
      fill(row,
        h('td', {}, g.name),
        h('td', {}, h('code', {}, `fathom.trackEvent(${JSON.stringify(g.name)})`), h('br'), h('small', { class: 'muted' }, `id ${g.id}`)),
        h('td', { class: 'actions' },
          h('button', { type: 'button', class: 'secondary small', 'aria-label': `Edit goal ${g.name}`, onclick: edit }, 'Edit'),
          deleteButton(`goal ${g.name}`, async () => {
            try {
              await api('DELETE', `/v1/sites/${siteId}/events/${g.id}`);
              status.ok(`Deleted goal ${g.name}.`);
              await render();
            } catch (err) {
              status.error(err.message);
            }
          })));
    function edit() {
      const newName = h('input', { name: 'name', required: true, maxlength: 255, value: g.name });
      // The API does not return a goal's currency in lists, so "keep" leaves it as it is.
      const newCurrency = select('currency', [['', 'Keep current currency'], ...currencyOptions], '');
      const form = h('form', { class: 'row wrap' }, field('Goal name', newName), field('Value currency', newCurrency),
        h('button', { type: 'submit' }, 'Save'), h('button', { type: 'button', class: 'secondary', onclick: view }, 'Cancel'));
      form.addEventListener('submit', async (event) => {
        event.preventDefault();
        try {
          g = await api('POST', `/v1/sites/${siteId}/events/${g.id}`, { name: newName.value, ...(newCurrency.value ? { currency: newCurrency.value } : {}) });
          status.ok(`Saved goal ${g.name}.`);
          view();
        } catch (err) {
          status.error(err.message);
        }
      });
      fill(row, h('td', { colspan: 3 }, form));
      newName.focus();
    }
    view();
    return row;
  }

  fill(section, h('h2', { id: 'goals-h' }, 'Goals'), h('p', { class: 'muted' }, 'Conversions the tracking script sends with fathom.trackEvent(name).'), list, form, status.el);
  return { section, render };
}

function milestonesSection(siteId) {
  const section = h('section', { class: 'card', 'aria-labelledby': 'milestones-h' });
  const status = statusLine();
  const name = h('input', { name: 'name', required: true, maxlength: 30 });
  const date = h('input', { name: 'milestone_date', type: 'date', required: true });
  const form = h('form', { class: 'row wrap', 'aria-label': 'Add a milestone' }, field('Milestone name', name), field('Date', date), h('button', { type: 'submit' }, 'Add milestone'));
  const list = h('div');
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    try {
      await api('POST', `/v1/sites/${siteId}/milestones`, { name: name.value, milestone_date: date.value });
      status.ok(`Added milestone ${name.value}.`);
      name.value = '';
      await render();
    } catch (err) {
      status.error(err.message);
    }
  });

  async function render() {
    const milestones = await listAll(`/v1/sites/${siteId}/milestones`);
    if (milestones.length === 0) {
      fill(list, h('p', { class: 'muted' }, 'No milestones yet.'));
      return;
    }
    fill(list, h('table', {},
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Name'), h('th', { scope: 'col' }, 'Date'), h('th', { scope: 'col' }, 'Actions'))),
      h('tbody', {}, milestones.map((m) => milestoneRow(m)))));
  }

  function milestoneRow(m) {
    const row = h('tr', { 'data-milestone': m.id });
    const view = () =>
      fill(row, h('td', {}, m.name), h('td', {}, m.milestone_date.slice(0, 10)),
        h('td', { class: 'actions' },
          h('button', { type: 'button', class: 'secondary small', 'aria-label': `Edit milestone ${m.name}`, onclick: edit }, 'Edit'),
          deleteButton(`milestone ${m.name}`, async () => {
            try {
              await api('DELETE', `/v1/sites/${siteId}/milestones/${m.id}`);
              status.ok(`Deleted milestone ${m.name}.`);
              await render();
            } catch (err) {
              status.error(err.message);
            }
          })));
    function edit() {
      const newName = h('input', { name: 'name', required: true, maxlength: 30, value: m.name });
      const newDate = h('input', { name: 'milestone_date', type: 'date', required: true, value: m.milestone_date.slice(0, 10) });
      const form = h('form', { class: 'row wrap' }, field('Milestone name', newName), field('Date', newDate),
        h('button', { type: 'submit' }, 'Save'), h('button', { type: 'button', class: 'secondary', onclick: view }, 'Cancel'));
      form.addEventListener('submit', async (event) => {
        event.preventDefault();
        try {
          m = await api('POST', `/v1/sites/${siteId}/milestones/${m.id}`, { name: newName.value, milestone_date: newDate.value });
          status.ok(`Saved milestone ${m.name}.`);
          view();
        } catch (err) {
          status.error(err.message);
        }
      });
      fill(row, h('td', { colspan: 3 }, form));
      newName.focus();
    }
    view();
    return row;
  }

  fill(section, h('h2', { id: 'milestones-h' }, 'Milestones'), h('p', { class: 'muted' }, 'Dated notes drawn on the report chart (a launch, a campaign).'), list, form, status.el);
  return { section, render };
}

export async function goalsPage() {
  const siteId = pageData('site');
  const goals = goalsSection(siteId);
  const milestones = milestonesSection(siteId);
  fill(main(), h('h1', {}, `Goals and milestones of ${pageData('siteName')}`),
    h('p', { class: 'links' }, h('a', { href: `/sites/${siteId}` }, 'Report'), ' · ', h('a', { href: `/sites/${siteId}/settings` }, 'Site settings')),
    goals.section, milestones.section);
  await Promise.all([goals.render(), milestones.render()]);
}
