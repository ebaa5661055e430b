-- dispatch_upsert.sql for 16 new cells at once: cell k (0 to 15) takes the
-- parameters ?(16k+1) to ?(16k+16), in the order dispatch_upsert.sql takes ?1
-- to ?16. A statement's own cost is paid once for 16 cells: SQLite binds no
-- arrays, so the rows are written out.
INSERT INTO dispatch_cell (keyed, structure_key, backend, op, dtypes,
                           kernel_source, kernel_revision_hash, cc_major,
                           cc_minor, hardware_sku, driver_version, candidates,
                           count, first_ingest, last_ingest, candidates_set_at, cell_id)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?14,
        CASE WHEN ?12 = '[]' THEN NULL ELSE ?15 END, ?16),
       (?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, ?30,
        CASE WHEN ?28 = '[]' THEN NULL ELSE ?31 END, ?32),
       (?33, ?34, ?35, ?36, ?37, ?38, ?39, ?40, ?41, ?42, ?43, ?44, ?45, ?46, ?46,
        CASE WHEN ?44 = '[]' THEN NULL ELSE ?47 END, ?48),
       (?49, ?50, ?51, ?52, ?53, ?54, ?55, ?56, ?57, ?58, ?59, ?60, ?61, ?62, ?62,
        CASE WHEN ?60 = '[]' THEN NULL ELSE ?63 END, ?64),
       (?65, ?66, ?67, ?68, ?69, ?70, ?71, ?72, ?73, ?74, ?75, ?76, ?77, ?78, ?78,
        CASE WHEN ?76 = '[]' THEN NULL ELSE ?79 END, ?80),
       (?81, ?82, ?83, ?84, ?85, ?86, ?87, ?88, ?89, ?90, ?91, ?92, ?93, ?94, ?94,
        CASE WHEN ?92 = '[]' THEN NULL ELSE ?95 END, ?96),
       (?97, ?98, ?99, ?100, ?101, ?102, ?103, ?104, ?105, ?106, ?107, ?108, ?109, ?110, ?110,
        CASE WHEN ?108 = '[]' THEN NULL ELSE ?111 END, ?112),
       (?113, ?114, ?115, ?116, ?117, ?118, ?119, ?120, ?121, ?122, ?123, ?124, ?125, ?126, ?126,
        CASE WHEN ?124 = '[]' THEN NULL ELSE ?127 END, ?128),
       (?129, ?130, ?131, ?132, ?133, ?134, ?135, ?136, ?137, ?138, ?139, ?140, ?141, ?142, ?142,
        CASE WHEN ?140 = '[]' THEN NULL ELSE ?143 END, ?144),
       (?145, ?146, ?147, ?148, ?149, ?150, ?151, ?152, ?153, ?154, ?155, ?156, ?157, ?158, ?158,
        CASE WHEN ?156 = '[]' THEN NULL ELSE ?159 END, ?160),
       (?161, ?162, ?163, ?164, ?165, ?166, ?167, ?168, ?169, ?170, ?171, ?172, ?173, ?174, ?174,
        CASE WHEN ?172 = '[]' THEN NULL ELSE ?175 END, ?176),
       (?177, ?178, ?179, ?180, ?181, ?182, ?183, ?184, ?185, ?186, ?187, ?188, ?189, ?190, ?190,
        CASE WHEN ?188 = '[]' THEN NULL ELSE ?191 END, ?192),
       (?193, ?194, ?195, ?196, ?197, ?198, ?199, ?200, ?201, ?202, ?203, ?204, ?205, ?206, ?206,
        CASE WHEN ?204 = '[]' THEN NULL ELSE ?207 END, ?208),
       (?209, ?210, ?211, ?212, ?213, ?214, ?215, ?216, ?217, ?218, ?219, ?220, ?221, ?222, ?222,
        CASE WHEN ?220 = '[]' THEN NULL ELSE ?223 END, ?224),
       (?225, ?226, ?227, ?228, ?229, ?230, ?231, ?232, ?233, ?234, ?235, ?236, ?237, ?238, ?238,
        CASE WHEN ?236 = '[]' THEN NULL ELSE ?239 END, ?240),
       (?241, ?242, ?243, ?244, ?245, ?246, ?247, ?248, ?249, ?250, ?251, ?252, ?253, ?254, ?254,
        CASE WHEN ?252 = '[]' THEN NULL ELSE ?255 END, ?256)
-- @include dispatch_upsert_conflict
;
