import type { ObjectLiteral, Repository } from 'typeorm';

/** A table whose rows hold a sealed value and, during a rotation's overlap, the previous one (`keyId`, `previousKeyId`). */
interface SealedRow extends ObjectLiteral {
  id: number;
  keyId: string;
  previousKeyId: string | null;
}

/** How many rows each encryption key id sealed (one row per key id, so a small result). */
export async function countByKeyId(rows: Repository<SealedRow>): Promise<Map<string, number>> {
  const counted = await rows
    .createQueryBuilder('r')
    .select('r.keyId', 'keyId')
    .addSelect('COUNT(*)', 'count')
    .groupBy('r.keyId')
    .getRawMany<{ keyId: string; count: string | number }>();
  return new Map(counted.map((row) => [row.keyId, Number(row.count)]));
}

/** Up to `limit` rows after `afterId` (by id) that another key than `keyId` sealed (the current or the previous value). */
export function sealedWithOtherKeys<T extends SealedRow>(rows: Repository<T>, keyId: string, afterId: number, limit: number): Promise<T[]> {
  return rows
    .createQueryBuilder('r')
    .where('r.id > :afterId', { afterId })
    .andWhere('(r.keyId <> :keyId OR r.previousKeyId <> :keyId)', { keyId })
    .orderBy('r.id', 'ASC')
    .limit(limit)
    .getMany();
}
