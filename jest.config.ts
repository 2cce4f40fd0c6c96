/** @jest-config-loader ts-node */
/** @jest-config-loader-options {"transpileOnly": true} */
import { getJestProjectsAsync } from '@nx/jest';

export default async () => ({ projects: await getJestProjectsAsync() });
