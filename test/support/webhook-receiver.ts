// The receiver lives in the testing kit (src/testing); these names keep older imports working.
export {
  RECEIVER_HOSTNAME,
  ReceivedRequest,
  startTestReceiver as startWebhookReceiver,
  type ReceiverBehaviour,
  type TestReceiver as WebhookReceiver,
} from '../../src/testing';
