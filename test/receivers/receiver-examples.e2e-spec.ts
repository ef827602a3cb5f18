import { describeReceiverExamples, NODE_EXAMPLES } from '../support/receiver-examples-suite';

// The examples in other languages run under `npm run test:examples` (receiver-examples.toolchain-spec.ts).
describeReceiverExamples(NODE_EXAMPLES);
