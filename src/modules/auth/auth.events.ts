// Events the auth module publishes on the in-process bus.
import type { UserRow } from '../users/index.js';

declare module '../../platform/events/bus.js' {
  interface AppEvents {
    /** A new account was stored by registration (the account-mail service sends its verification). */
    'user.registered': UserRow;
  }
}
