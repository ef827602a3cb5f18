import { describeReceiverExamples, TOOLCHAIN_EXAMPLES } from '../support/receiver-examples-suite';

// `npm run test:examples`: the Go and Python examples, on toolchains `npm test` does not assume.
describeReceiverExamples(TOOLCHAIN_EXAMPLES);
