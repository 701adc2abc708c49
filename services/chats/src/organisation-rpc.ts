import type { Subscription } from '@switchboard/kit';
import {
  blockContact,
  createChatTagging,
  createContactProvider,
  createMessageTagging,
  createSavedResponse,
  createTag,
  deleteChatTagging,
  deleteContactProvider,
  deleteMessageTagging,
  deleteSavedResponse,
  deleteTag,
  getContact,
  getContactProvider,
  getSavedResponse,
  getTag,
  listChatTaggings,
  listContactProviders,
  listContacts,
  listMessageTaggings,
  listSavedResponses,
  listTaggingEvents,
  listTags,
  updateContactProvider,
  updateSavedResponse,
  updateTag,
  verifyContact,
} from '@switchboard/proto';
import * as providers from './use-cases/contact-providers.ts';
import * as contacts from './use-cases/contacts.ts';
import type { OrganisationDeps } from './use-cases/organisation-deps.ts';
import * as saved from './use-cases/saved-responses.ts';
import * as taggings from './use-cases/taggings.ts';
import * as tags from './use-cases/tags.ts';

/** Serves the organisation requests (contacts and providers, tags, taggings, saved responses). */
export function startOrganisationRpc(deps: OrganisationDeps): Subscription[] {
  const { bus } = deps;
  const queue = { queue: 'chats' };
  return [
    bus.serve(listContactProviders, (r) => providers.listContactProviders(deps, r), queue),
    bus.serve(getContactProvider, (r) => providers.getContactProvider(deps, r), queue),
    bus.serve(createContactProvider, (r) => providers.createContactProvider(deps, r), queue),
    bus.serve(updateContactProvider, (r) => providers.updateContactProvider(deps, r), queue),
    bus.serve(deleteContactProvider, (r) => providers.deleteContactProvider(deps, r), queue),
    bus.serve(listContacts, (r) => contacts.listContacts(deps, r), queue),
    bus.serve(getContact, (r) => contacts.getContact(deps, r), queue),
    bus.serve(verifyContact, (r) => contacts.verifyContact(deps, r), queue),
    bus.serve(blockContact, (r) => contacts.blockContact(deps, r), queue),
    bus.serve(listTags, (r) => tags.listTags(deps, r), queue),
    bus.serve(getTag, (r) => tags.getTag(deps, r), queue),
    bus.serve(createTag, (r) => tags.createTag(deps, r), queue),
    bus.serve(updateTag, (r) => tags.updateTag(deps, r), queue),
    bus.serve(deleteTag, (r) => tags.deleteTag(deps, r), queue),
    bus.serve(listChatTaggings, (r) => taggings.listChatTaggings(deps, r), queue),
    bus.serve(createChatTagging, (r) => taggings.createChatTagging(deps, r), queue),
    bus.serve(deleteChatTagging, (r) => taggings.deleteChatTagging(deps, r), queue),
    bus.serve(listMessageTaggings, (r) => taggings.listMessageTaggings(deps, r), queue),
    bus.serve(createMessageTagging, (r) => taggings.createMessageTagging(deps, r), queue),
    bus.serve(deleteMessageTagging, (r) => taggings.deleteMessageTagging(deps, r), queue),
    bus.serve(listTaggingEvents, (r) => taggings.listTaggingEvents(deps, r), queue),
    bus.serve(listSavedResponses, (r) => saved.listSavedResponses(deps, r), queue),
    bus.serve(getSavedResponse, (r) => saved.getSavedResponse(deps, r), queue),
    bus.serve(createSavedResponse, (r) => saved.createSavedResponse(deps, r), queue),
    bus.serve(updateSavedResponse, (r) => saved.updateSavedResponse(deps, r), queue),
    bus.serve(deleteSavedResponse, (r) => saved.deleteSavedResponse(deps, r), queue),
  ];
}
