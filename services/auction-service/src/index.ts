export { auctionService } from './service.ts';
