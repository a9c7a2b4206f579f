/** The file columns the API shows; blob_key is selected separately where bytes are touched. */
export const FILE_COLUMNS = ['id', 'project_id', 'media_id', 'kind', 'format', 'type', 'width', 'height', 'duration', 'filesize', 'folder', 'filename', 'ref', 'metadata', 'status', 'created', 'updated'] as const;
