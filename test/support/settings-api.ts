/** The settings API, as a frontend calls it. */
export const SETTINGS = '/api/v1/settings/notifications';
/** The user's delivery log. */
export const DELIVERIES = `${SETTINGS}/webhook-deliveries`;
