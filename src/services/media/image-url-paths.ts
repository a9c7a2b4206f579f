/** Where image URLs live: /img/{project}/{signature}/{options}/{file_id}[.ext]. */
export const IMAGE_URL_PREFIX = '/img';
