import { describeControlStoreConformance } from '@ballast/testing';
import { InMemoryControlStore } from './in-memory-control-store';

describeControlStoreConformance('InMemoryControlStore', () => ({ store: new InMemoryControlStore() }));
